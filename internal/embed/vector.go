package embed

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
)

// Encode writes v as little-endian float32s (the embeddings table's vector
// column).
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode reads what Encode wrote; dims is the length expected.
func Decode(b []byte, dims int) ([]float32, error) {
	if len(b) != 4*dims {
		return nil, fmt.Errorf("vector of %d bytes, want %d dimensions (%d bytes)", len(b), dims, 4*dims)
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Normalize scales v to unit length in place (a zero vector stays zero), so
// that the cosine of two normalized vectors is their dot product.
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Dot is the dot product of two vectors of the same length: their cosine
// when both are normalized.
func Dot(a, b []float32) float32 { return dot(a, b) }

// dot is the dot product of two vectors of the same length.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Hit is a vector search's result: the row's id and its cosine similarity
// to the query.
type Hit struct {
	ID    string
	Score float32
}

// minHeap keeps the best k hits with the worst on top.
type minHeap []Hit

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].Score != h[j].Score {
		return h[i].Score < h[j].Score
	}
	return h[i].ID > h[j].ID
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(Hit)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topK ranks the rows of m by cosine with the normalized query q: the k
// best whose cosine is above minScore, best first (ties by id).
func topK(m *matrix, q []float32, k int, minScore float32) []Hit {
	if k <= 0 || len(q) != m.dims {
		return nil
	}
	h := make(minHeap, 0, k)
	for i, id := range m.ids {
		s := dot(q, m.data[i*m.dims:(i+1)*m.dims])
		if s <= minScore {
			continue
		}
		if len(h) < k {
			heap.Push(&h, Hit{ID: id, Score: s})
		} else if s > h[0].Score || s == h[0].Score && id < h[0].ID {
			h[0] = Hit{ID: id, Score: s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// matrix is a workspace's normalized vectors of one kind and model, one row
// per id, contiguous.
type matrix struct {
	dims int
	ids  []string
	data []float32
	// row is the row of each id (a re-embedded id replaces its row).
	row map[string]int
	// maxSeq is the highest embeddings.seq loaded.
	maxSeq int64
}

func newMatrix(dims int) *matrix { return &matrix{dims: dims, row: map[string]int{}} }

// put sets id's vector (normalized, of m.dims).
func (m *matrix) put(id string, v []float32) {
	if r, ok := m.row[id]; ok {
		copy(m.data[r*m.dims:], v)
		return
	}
	m.row[id] = len(m.ids)
	m.ids = append(m.ids, id)
	m.data = append(m.data, v...)
}

// bytes is the memory m holds, roughly: the floats, the ids and the map.
func (m *matrix) bytes() int {
	n := 4*len(m.data) + 64*len(m.ids)
	for _, id := range m.ids {
		n += len(id)
	}
	return n
}
