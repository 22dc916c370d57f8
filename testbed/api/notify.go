package api

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/testbed/replica"
)

// InvalidateChannel is the Redis pub/sub channel of broadcast
// invalidations: a message is item ids separated by commas. Every replica
// subscribes; on a message each reloads those items at once, as services
// that refresh on a change event do.
const InvalidateChannel = "herdbench:invalidate"

// listen subscribes to InvalidateChannel until ctx ends; go-redis
// resubscribes after a lost connection. A replica on Memcached has no
// channel: Memcached has no pub/sub, and a broadcast invalidation there is
// refused (replica.Options.CacheProblems), not carried by a Redis it may have
// beside it for the write queue.
func (s *Server) listen(ctx context.Context) {
	if s.opts.Cache == replica.CacheMemcached {
		return
	}
	ps := s.rdb.Subscribe(ctx, InvalidateChannel)
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			s.invalidate(parseIDs(msg.Payload))
		}
	}
}

func parseIDs(payload string) []int64 {
	var ids []int64
	for _, f := range strings.Split(payload, ",") {
		if id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// invalidate reloads every id at once under the replica's strategy: its
// loader's Reloader (singleflight shares a load already running in this
// replica, lock lets one replica in the fleet reload each id and the others
// skip it), or a load.
func (s *Server) invalidate(ids []int64) {
	v := s.view()
	v.m.notifications.Inc()
	for _, id := range ids {
		s.background(func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.DBTimeout+time.Second)
			defer cancel()
			r := &Request{ctx: ctx, id: id, s: s, v: v}
			if rl, ok := v.plan.loader.(Reloader); ok {
				rl.Reload(r)
				return
			}
			_, _ = r.Load()
		})
	}
}
