package herd

import "encoding"

// SetText points *dst at what v reads as by its UnmarshalText, and leaves
// *dst as it was if v does not read: how an optional field (an arm's
// policy, a patch of the edges' policy) is set from its short form, by the
// type's own parser.
func SetText[T any, P interface {
	*T
	encoding.TextUnmarshaler
}](dst **T, v string) error {
	x := new(T)
	if err := P(x).UnmarshalText([]byte(v)); err != nil {
		return err
	}
	*dst = x
	return nil
}
