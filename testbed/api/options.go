package api

import (
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Problems are every problem with o at once, each a FieldError naming its
// field (db_pool for DBPoolSize, as the flags spell them): the start
// options, then the run-time config. A zero pool or timeout is refused,
// not replaced: the drivers would read it as their own default, or as no
// time at all.
func (o Options) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if o.DBPoolSize < 1 || o.DBPoolSize > 1000 {
		errs.Add("db_pool", "%d out of range (accepted: 1 to 1000 connections per replica)", o.DBPoolSize)
	}
	if o.RedisPoolSize < 1 || o.RedisPoolSize > 10_000 {
		errs.Add("redis_pool", "%d out of range (accepted: 1 to 10000 connections per replica)", o.RedisPoolSize)
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{{"db_timeout", o.DBTimeout}, {"redis_timeout", o.RedisTimeout}} {
		if d.d <= 0 {
			errs.Add(d.field, "%s out of range (accepted: more than 0, such as 1s)", d.d)
		}
	}
	return append(errs, o.Config.Problems()...)
}
