package toolsearch

import (
	"testing"
)

// FuzzSearch: any request, however odd (paths, blobs, Chinese, control
// characters, invalid UTF-8), is searched without a panic, and the hits are
// at most the limit, best first, each reaching MinScore.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{
		"what will the weather be in Vancouver tomorrow",
		"save it to /root/markdown/report.md",
		"获取 今日 热榜 新闻",
		"iVBORw0KGgoAAAANSUhEUgAAAgAAAAIACAYAAAD0eNT6AAAABHNCSVQICAgIfAhkiAAAAAlwSFlz",
		"next 3 days, past week, last Wednesday",
		"current stock price",
		"\x00\xff/..//a.b.c.d",
		"",
	} {
		f.Add(q, 10)
	}
	ix := New(catalog())
	f.Fuzz(func(t *testing.T, q string, limit int) {
		limit = limit % 60
		hits := ix.Search(q, limit, nil)
		if len(hits) > max(limit, 0) {
			t.Fatalf("%d hits for limit %d", len(hits), limit)
		}
		for i, h := range hits {
			if h.Score < MinScore {
				t.Fatalf("hit %s scores %v, under MinScore", h.Tool.Name, h.Score)
			}
			if i > 0 && hits[i-1].Score < h.Score {
				t.Fatalf("hits not best first: %v then %v", hits[i-1].Score, h.Score)
			}
		}
		words(q)
		readRequest(q)
	})
}
