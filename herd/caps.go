package herd

// MaxRate is herdbench's own cap on the rate, in requests per second: a
// plan above it is refused (plan.MaxRate is this one), and so is a
// target's own cap above it, which could never bind. It lives here, below
// both, since experiment imports targets.
const MaxRate = 20_000
