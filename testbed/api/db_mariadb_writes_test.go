package api

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// post sends one like to item id, named wid when given, and returns the
// status.
func (r mariaReplica) post(t *testing.T, id int64, wid string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/items/%d/likes", r.c.URL, id), nil)
	if wid != "" {
		req.Header.Set(admin.WriteIDHeader, wid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// likesReach polls the items' likes until they are want, for up to 10 s,
// and returns the likes and feed rows then.
func likesReach(t *testing.T, db *sql.DB, ids []int64, want int64) (likes, feed int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		likes, feed, err := (MariaDBLikes{db}).LikesAndFeed(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		if likes == want || time.Now().After(deadline) {
			return likes, feed
		}
		time.Sleep(20 * time.Millisecond) // polling MariaDB, with the deadline above
	}
}

// Each write strategy applies each like once on MariaDB, with its
// fan-out committed beside it: 30 direct likes, 30 coalesced, 20 queued
// and then the same 20 redelivered (adding nothing) and one more. Then
// the digests: ItemDigestMariaDB and FillDigestMariaDB each match one
// statement among all the replica ran.
func TestMariaDBWrites(t *testing.T) {
	r := startMariaReplica(t, 50, nil)
	ctx := context.Background()
	app, err := sql.Open("mysql", r.m.DSN("app", "app-pw", "herdbench"))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if err := (MariaDBLikes{app}).SetFollowers(ctx, []int64{3, 4, 5, 6}, 3); err != nil {
		t.Fatal(err)
	}
	var withFollowers int
	if err := app.QueryRow(`SELECT COUNT(*) FROM likes WHERE followers = 3`).Scan(&withFollowers); err != nil || withFollowers != 4 {
		t.Fatalf("items with 3 followers = %d, %v; want 4", withFollowers, err)
	}

	var wg sync.WaitGroup
	codes := make(chan int, 30)
	for range 30 {
		wg.Add(1)
		go func() { defer wg.Done(); codes <- r.post(t, 3, "") }()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusNoContent {
			t.Fatalf("direct POST /items/3/likes = %d; want 204", code)
		}
	}
	if likes, feed := likesReach(t, app, []int64{3}, 30); likes != 30 || feed != 90 {
		t.Errorf("direct: 30 likes to an item of 3 followers gave %d likes, %d feed rows; want 30, 90", likes, feed)
	}

	r.put(t, `{"write_strategy":"coalesce","coalesce_interval":"100ms"}`)
	for i := range 30 {
		if code := r.post(t, 4+int64(i%3)/2, ""); code != http.StatusAccepted { // 20 to item 4, 10 to item 5
			t.Fatalf("coalesce POST = %d; want 202", code)
		}
	}
	r.put(t, `{"write_strategy":"direct"}`) // flushes what it held
	if likes, feed := likesReach(t, app, []int64{4, 5}, 30); likes != 30 || feed != 90 {
		t.Errorf("coalesce: 30 likes gave %d likes, %d feed rows; want 30, 90", likes, feed)
	}
	if n, _ := (MariaDBLikes{app}).Likes(ctx, []int64{4}); n != 20 {
		t.Errorf("coalesce: item 4 has %d likes; want 20", n)
	}

	r.put(t, `{"write_strategy":"queue"}`)
	for i := range 20 {
		if code := r.post(t, 6, fmt.Sprintf("q%d", i)); code != http.StatusAccepted {
			t.Fatalf("queue POST = %d; want 202", code)
		}
	}
	if likes, _ := likesReach(t, app, []int64{6}, 20); likes != 20 {
		t.Fatalf("queue: 20 likes gave %d", likes)
	}
	r.redeliver(t, 6, 20)
	if code := r.post(t, 6, "q20"); code != http.StatusAccepted { // after the redelivered ones: once it is in, they were read
		t.Fatalf("queue POST = %d; want 202", code)
	}
	if likes, feed := likesReach(t, app, []int64{6}, 21); likes != 21 || feed != 63 {
		t.Errorf("queue: 20 likes, the same 20 redelivered, and 1 more gave %d likes, %d feed rows; want 21, 63", likes, feed)
	}
	if code := r.post(t, 6, strings.Repeat("x", MaxWriteIDMariaDB+1)); code != http.StatusBadRequest {
		t.Errorf("a write id of %d bytes = %d; want 400", MaxWriteIDMariaDB+1, code)
	}

	all := make([]int64, 50)
	for i := range all {
		all[i] = int64(i + 1)
	}
	mfs, err := r.c.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total, _ := (MariaDBLikes{app}).Likes(ctx, all)
	if applied := mfs.Sum(admin.MetricWritesApplied); total != 81 || applied != 81 {
		t.Errorf("likes in MariaDB %d, the replica's applied %d; want 81, 81", total, applied)
	}
	r.digestsAreOneEach(t)
}

// put sets the replica's config.
func (r mariaReplica) put(t *testing.T, body string) {
	t.Helper()
	if code, resp := do(t, http.MethodPut, r.c.URL+"/admin/config", body); code != 200 {
		t.Fatalf("PUT /admin/config %s = %d %s", body, code, resp)
	}
}

// redeliver adds the queued writes q0..q(n-1) of item id to the stream
// again, as a consumer's death redelivers them.
func (r mariaReplica) redeliver(t *testing.T, id int64, n int) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: r.redis})
	defer rdb.Close()
	for i := range n {
		err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: replica.WriteStream, Values: map[string]any{
			"item": id, "id": fmt.Sprintf("q%d", i), "at": time.Now().UnixNano()}}).Err()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// digestsAreOneEach runs a load and a fill, then finds that each digest
// expression matches exactly one statement's digest among all MariaDB
// ran, in MariaDB's REGEXP and Go's alike.
func (r mariaReplica) digestsAreOneEach(t *testing.T) {
	t.Helper()
	if code, _ := r.get(t, 9); code != 200 {
		t.Fatalf("GET /items/9 = %d", code)
	}
	if _, err := r.c.Fill(context.Background(), 1, 50); err != nil {
		t.Fatal(err)
	}
	// the fill's digest row shows a moment after its answer (once in CI:
	// not in the first read, in the REGEXP count just after): read until
	// it does, up to 5 s
	var texts []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		texts = r.digestTexts(t)
		if slices.ContainsFunc(texts, regexp.MustCompile(FillDigestMariaDB).MatchString) || time.Now().After(deadline) {
			break
		}
	}
	for _, d := range []struct{ name, re, must string }{
		{"ItemDigestMariaDB", ItemDigestMariaDB, "SLEEP"},
		{"FillDigestMariaDB", FillDigestMariaDB, "BETWEEN"},
	} {
		var in []string
		for _, s := range texts {
			if regexp.MustCompile(d.re).MatchString(s) {
				in = append(in, s)
			}
		}
		var bySQL int
		if err := r.m.Root().QueryRow(`SELECT COUNT(*) FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT REGEXP ?`, d.re).Scan(&bySQL); err != nil {
			t.Fatal(err)
		}
		if len(in) != 1 || bySQL != 1 || !strings.Contains(in[0], d.must) {
			t.Errorf("%s matches %d digests in Go (%q), %d by REGEXP, of %d; want 1, its statement's", d.name, len(in), in, bySQL, len(texts))
		}
	}
}

// digestTexts are the digests MariaDB's performance_schema holds.
func (r mariaReplica) digestTexts(t *testing.T) []string {
	t.Helper()
	rows, err := r.m.Root().Query(`SELECT DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var texts []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, s)
	}
	return texts
}
