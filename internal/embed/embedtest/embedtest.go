// Package embedtest serves a fake embedding model for tests: an HTTP server
// that speaks OpenAI's POST /v1/embeddings and Ollama's POST /api/embed, so
// that internal/embed's clients talk to it exactly as to the real services.
//
// Its vectors are deterministic and NOT semantic: a hashed bag of crudely
// stemmed words, where the words of a synonym group ([Synonyms]) hash alike.
// Texts sharing words (or synonyms) are close; nothing else is. That is
// enough to test hybrid search end to end: "automobile" and "car" share no
// letter-level word, yet their vectors coincide.
package embedtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// DefaultDims is the fake's vector length.
const DefaultDims = 256

// Synonyms are the fake's groups of words of one meaning: each word is
// embedded as its group's first word.
var Synonyms = [][]string{
	{"car", "automobile", "vehicle", "sedan"},
	{"doctor", "physician", "clinician"},
	{"buy", "bought", "purchase", "acquire"},
	{"cat", "feline", "kitten"},
	{"happy", "glad", "joyful", "cheerful"},
	{"house", "home", "dwelling", "residence"},
	{"big", "large", "huge", "enormous"},
	{"film", "movie", "cinema"},
	{"begin", "start", "commence"},
	{"sick", "ill", "unwell"},
}

var canonical = func() map[string]string {
	m := map[string]string{}
	for _, g := range Synonyms {
		for _, w := range g {
			m[w] = g[0]
		}
	}
	return m
}()

// stopWords are left out of the bag.
var stopWords = map[string]bool{"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "of": true, "to": true,
	"in": true, "on": true, "and": true, "or": true, "for": true, "with": true, "my": true, "i": true, "it": true, "at": true, "by": true, "what": true, "who": true, "did": true, "does": true, "do": true}

// stem strips a few English suffixes.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// Vector is the fake's embedding of text in dims dimensions.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		if c, ok := canonical[w]; ok {
			w = c
		} else if c, ok := canonical[stem(w)]; ok {
			w = c
		} else {
			w = stem(w)
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign
	}
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	if s == 0 {
		v[0] = 1 // providers never return a zero vector
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

// Server is a fake embedding model. Its zero configuration answers every
// request with DefaultDims-dimensional vectors.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	dims     int
	down     int // status of every answer while not zero
	failNext []int
	requests int
	texts    int
	models   []string
}

// New starts a fake embedding server, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{dims: DefaultDims}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.openai)
	mux.HandleFunc("POST /api/embed", s.ollama)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// OpenAIURL is the base URL of its OpenAI-compatible API (…/v1).
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// SetDims makes it answer vectors of n dimensions (a model of another
// length, or a provider that ignores the dimensions asked).
func (s *Server) SetDims(n int) {
	s.mu.Lock()
	s.dims = n
	s.mu.Unlock()
}

// Down makes every answer fail with status (0: up again).
func (s *Server) Down(status int) {
	s.mu.Lock()
	s.down = status
	s.mu.Unlock()
}

// FailNext makes the next len(statuses) requests fail with those statuses.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	s.failNext = append(s.failNext, statuses...)
	s.mu.Unlock()
}

// Requests is how many requests it answered (failed ones too), Texts how
// many texts it embedded.
func (s *Server) Requests() (requests, texts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.texts
}

// Models are the models named by the requests, in order.
func (s *Server) Models() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.models...)
}

// take counts a request and says its failure status (0: none) and dims.
func (s *Server) take(model string, n int) (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.models = append(s.models, model)
	if len(s.failNext) > 0 {
		st := s.failNext[0]
		s.failNext = s.failNext[1:]
		return st, 0
	}
	if s.down != 0 {
		return s.down, 0
	}
	s.texts += n
	return 0, s.dims
}

// input reads OpenAI's and Ollama's input: a string or an array of strings.
func input(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("input must be a string or an array of strings")
	}
	return many, nil
}

func (s *Server) openai(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	texts, err := input(req.Input)
	if err != nil || req.Model == "" {
		fail(http.StatusBadRequest, "'input' and 'model' are required")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		fail(http.StatusBadRequest, "the fake serves encoding_format float only")
		return
	}
	status, dims := s.take(req.Model, len(texts))
	if status != 0 {
		fail(status, fmt.Sprintf("fake failure %d", status))
		return
	}
	if req.Dimensions > 0 && dims == DefaultDims {
		dims = req.Dimensions
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	data := make([]item, len(texts))
	tokens := 0
	for i, t := range texts {
		if t == "" {
			fail(http.StatusBadRequest, fmt.Sprintf("'$.input[%d]' is invalid: an empty string", i))
			return
		}
		data[i] = item{Object: "embedding", Embedding: Vector(t, dims), Index: i}
		tokens += len(strings.Fields(t))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func (s *Server) ollama(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string          `json:"model"`
		Input      json.RawMessage `json:"input"`
		Dimensions int             `json:"dimensions"`
	}
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(http.StatusBadRequest, "invalid request body")
		return
	}
	texts, err := input(req.Input)
	if err != nil || req.Model == "" {
		fail(http.StatusBadRequest, "model and input are required")
		return
	}
	status, dims := s.take(req.Model, len(texts))
	if status != 0 {
		fail(status, fmt.Sprintf("fake failure %d", status))
		return
	}
	if req.Dimensions > 0 && dims == DefaultDims {
		dims = req.Dimensions
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t, dims)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out, "total_duration": 1000, "load_duration": 10, "prompt_eval_count": len(texts)})
}
