package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplicasShareTheRateLimit: two replicas on one PostgreSQL database,
// behind the round-robin balancer, limit a user's requests to the
// configured rate together, not each: with --token-rate 0.1 (bursts of 10,
// one request more every 10 s) 40 requests in a row get 10 answers (plus
// one per 10 s elapsed), not the 20 two separate limits would give; the
// others get 429 with Retry-After and the same message as on one replica.
func TestReplicasShareTheRateLimit(t *testing.T) {
	reps, db := startReplicas(t, 2, "--no-demo", "--token-rate", "0.1")
	out, errOut, code := runNexus(t, "", "users", "add", "alice", "--db", db)
	if code != 0 {
		t.Fatalf("users add: %s", errOut)
	}
	token := strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	front, counts := roundRobin(t, bases(reps))

	const requests, burst, interval = 40, 10, 10 * time.Second
	start := time.Now()
	admitted := 0
	for i := range requests {
		req, _ := http.NewRequest("GET", front+"/api/tools", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > burst*int(interval/time.Second) {
				t.Fatalf("request %d: Retry-After %q", i, resp.Header.Get("Retry-After"))
			}
			want := "too many requests for this user: at most 0.1 a second; retry in " + strconv.Itoa(secs) + " s"
			if !strings.Contains(string(body), `"code":"RATE_LIMITED"`) || !strings.Contains(string(body), want) {
				t.Fatalf("request %d: 429 %s, want RATE_LIMITED and %q", i, body, want)
			}
		default:
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	elapsed := time.Since(start)
	most := burst + int(elapsed/interval)
	t.Logf("%d of %d requests admitted in %v through 2 replicas (at most %d allowed; separate limits would admit %d)",
		admitted, requests, elapsed.Round(time.Millisecond), most, 2*burst)
	if admitted < burst || admitted > most {
		t.Fatalf("admitted %d of %d in %v, want %d to %d", admitted, requests, elapsed, burst, most)
	}
	for i, c := range counts {
		if c.Load() < requests/2 {
			t.Errorf("replica %d got %d requests, want %d", i, c.Load(), requests/2)
		}
	}
}
