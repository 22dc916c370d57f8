package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/herdbench/herdbench/testbed"
)

// readyMsg is what a detached supervisor writes on its notify pipe once:
// the status when every part answers, or why it failed.
type readyMsg struct {
	Status  *testbed.Status `json:"status,omitempty"`
	Error   string          `json:"error,omitempty"`
	Running bool            `json:"running,omitempty"` // the error is ErrRunning
}

// Notify tells the process waiting in AwaitReady how Start went.
func Notify(w io.Writer, st testbed.Status, startErr error) error {
	m := readyMsg{}
	if startErr != nil {
		m.Error = startErr.Error()
		m.Running = errors.Is(startErr, ErrRunning)
	} else {
		m.Status = &st
	}
	return json.NewEncoder(w).Encode(m)
}

// ErrSupervisorDied is returned by AwaitReady when the supervisor ended
// without a word.
var ErrSupervisorDied = errors.New("the testbed supervisor exited before it was ready")

// AwaitReady reads a supervisor's Notify message.
func AwaitReady(r io.Reader) (testbed.Status, error) {
	var m readyMsg
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return testbed.Status{}, ErrSupervisorDied
		}
		return testbed.Status{}, fmt.Errorf("read supervisor: %w", err)
	}
	switch {
	case m.Running:
		return testbed.Status{}, fmt.Errorf("%w: %s", ErrRunning, m.Error)
	case m.Error != "":
		return testbed.Status{}, errors.New(m.Error)
	case m.Status == nil:
		return testbed.Status{}, ErrSupervisorDied
	}
	return *m.Status, nil
}
