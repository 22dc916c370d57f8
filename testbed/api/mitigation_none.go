package api

// noneStrategy is plain cache-aside: every miss loads. It has no hooks:
// the server's own paths are none's.
type noneStrategy struct{}

func (noneStrategy) Name() string     { return None }
func (noneStrategy) Describe() string { return "plain cache-aside: every miss loads" }
func (noneStrategy) Kind() string     { return KindNone }
