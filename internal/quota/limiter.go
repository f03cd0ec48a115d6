package quota

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LimiterOptions configure a [Limiter].
type LimiterOptions struct {
	// Rate is the sustained number of requests per second a key may make.
	Rate float64
	// Burst is how many requests a key may make at once (at least 1).
	Burst int
	// MaxKeys bounds the keys tracked at once (default 100,000): past it the
	// least recently seen key is forgotten, which gives it a full bucket when
	// it returns.
	MaxKeys int
	// Idle is how long a key may go unseen before it is forgotten (default:
	// the time its bucket takes to refill, so nothing is lost by forgetting
	// it; never less).
	Idle time.Duration
	// Now is the clock (default time.Now); tests set a fake one.
	Now func() time.Time
}

// Limiter is an in-memory token-bucket rate limiter per key: each key's
// bucket holds up to Burst tokens, refills at Rate per second, and a request
// takes one. Memory is bounded: keys unseen for Idle are forgotten, and at
// most MaxKeys are kept. Each replica limits its own requests: the HTTP
// front uses a [SharedLimiter], which holds across replicas, and falls back
// to a Limiter while the store does not answer. It is safe for concurrent
// use.
type Limiter struct {
	rate    float64
	burst   float64
	maxKeys int
	idle    time.Duration
	now     func() time.Time

	mu   sync.Mutex
	keys map[string]*list.Element // of *bucket
	lru  list.List                // most recently seen first
}

type bucket struct {
	key    string
	tokens float64
	last   time.Time // of the last refill
}

// NewLimiter returns a limiter with options o.
func NewLimiter(o LimiterOptions) (*Limiter, error) {
	if !(o.Rate > 0) {
		return nil, fmt.Errorf("quota: the request rate is %v; it must be more than 0", o.Rate)
	}
	if o.Burst < 1 {
		return nil, fmt.Errorf("quota: the request burst is %d; it must be 1 or more", o.Burst)
	}
	if o.MaxKeys < 0 || o.Idle < 0 {
		return nil, errors.New("quota: MaxKeys and Idle must not be negative")
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = 100_000
	}
	refill := time.Duration(float64(o.Burst) / o.Rate * float64(time.Second))
	if o.Idle < refill {
		o.Idle = refill
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Limiter{rate: o.Rate, burst: float64(o.Burst), maxKeys: o.MaxKeys, idle: o.Idle, now: o.Now,
		keys: make(map[string]*list.Element)}, nil
}

// Rate is the sustained requests a second a key may make.
func (l *Limiter) Rate() float64 { return l.rate }

// Allow takes a token from key's bucket. When the bucket is empty it returns
// false and how long until a token is there (for a 429 response's
// Retry-After: see [RetrySeconds]).
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evict(now)
	var b *bucket
	if e, found := l.keys[key]; found {
		l.lru.MoveToFront(e)
		b = e.Value.(*bucket)
		if dt := now.Sub(b.last); dt > 0 {
			b.tokens = min(l.burst, b.tokens+dt.Seconds()*l.rate)
			b.last = now
		}
	} else {
		if len(l.keys) >= l.maxKeys {
			l.remove(l.lru.Back())
		}
		b = &bucket{key: key, tokens: l.burst, last: now}
		l.keys[key] = l.lru.PushFront(b)
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, max(wait, time.Nanosecond)
}

// Len returns the number of keys tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// evict forgets the keys unseen for l.idle, least recently seen first.
func (l *Limiter) evict(now time.Time) {
	for e := l.lru.Back(); e != nil; e = l.lru.Back() {
		if now.Sub(e.Value.(*bucket).last) < l.idle {
			return
		}
		l.remove(e)
	}
}

func (l *Limiter) remove(e *list.Element) {
	delete(l.keys, e.Value.(*bucket).key)
	l.lru.Remove(e)
}
