package herd

import (
	"fmt"
	"strconv"
)

// CheckPort refuses a port no connection can reach (the URL and host:port
// parsers take any digits): "" is the scheme's own.
func CheckPort(port string) error {
	if n, err := strconv.Atoi(port); port != "" && (err != nil || n < 1 || n > 65535) {
		return fmt.Errorf("port %s out of range (accepted: 1 to 65535)", port)
	}
	return nil
}
