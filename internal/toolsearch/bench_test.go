package toolsearch

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/livemcpbench"
)

// benchQueries are requests of the kinds people make: short and long, of
// one part and of several, with paths, times and filler.
var benchQueries = []string{
	"what will the weather be in Vancouver tomorrow",
	"Find today's trending GitHub repositories and save a Markdown summary to /root/markdown/trends.md",
	"Help me check the high-speed train tickets from Beijing to Shanghai on next Wednesday.",
	"Analyze Apple's stock for the past year and summarize it in a PPT in /root/ppt/apple.pptx.",
	"Read the customer information in /root/csv/customers-100.csv and tell me Sheryl Meyers's email address",
	"search papers about web agents",
	"convert docx to pdf",
	"I need a daily financial brief. Fetch today's economic news, cross-reference it with relevant stock movements, and then generate a report.",
}

// synthetic is n generated tools of n/10 servers, from a vocabulary of
// actions, things and domains, some described in Chinese.
func synthetic(n int) []Tool {
	verbs := []string{"get", "list", "search", "create", "update", "delete", "convert", "analyze", "send", "download", "read", "write", "generate", "find", "compare"}
	things := []string{"file", "directory", "document", "spreadsheet", "presentation", "image", "chart", "map", "route", "weather", "news", "stock", "price", "video", "song", "paper", "issue", "repository", "ticket", "station", "recipe", "calendar", "email", "message", "page", "user", "card", "character", "package", "table"}
	domains := []string{"finance", "travel", "office", "code", "media", "research", "games", "shopping", "health", "maps", "social", "education"}
	zh := []string{"获取热门新闻资讯", "查询火车票余票信息", "搜索菜谱和食材", "获取股票价格数据", "生成图表并保存文件", "获取当前日期和时间"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	tools := make([]Tool, n)
	for i := range tools {
		srv := i / 10
		domain := domains[srv%len(domains)]
		verb, thing := pick(verbs), pick(things)
		name := fmt.Sprintf("%s_%s_%d", verb, thing, i%10)
		desc := fmt.Sprintf("%s a %s in the %s service. Supports %s and %s for each %s, with options for %s.",
			strings.ToUpper(verb[:1])+verb[1:], thing, domain, pick(things), pick(things), pick(things), pick(verbs))
		if rng.IntN(8) == 0 {
			desc = pick(zh) + "，" + pick(zh) + "。"
		}
		tools[i] = Tool{
			Name: fmt.Sprintf("%s__srv%d__%s", domain, srv, name), Tool: name, Toolbox: domain, Server: fmt.Sprintf("srv%d", srv),
			Description: desc,
			Params: []Param{
				{Name: thing + "_id", Description: "The " + thing + " to " + verb},
				{Name: "limit", Description: "How many results to return"},
			},
			ServerDescription: fmt.Sprintf("Tools for %s: %s, %s and %s.", domain, pick(things), pick(things), pick(things)),
		}
	}
	return tools
}

// liveMCPBench is LiveMCPBench's catalog, its servers copied under new
// names until it holds n tools, or nil without the data.
func liveMCPBench(tb testing.TB, n int) []Tool {
	servers, _, err := livemcpbench.Load(filepath.Join("..", "..", "..", "shared", "data", "livemcpbench"))
	if err != nil {
		tb.Skipf("SKIP: LiveMCPBench is not in ../shared/data (%v): the synthetic benchmarks still run", err)
	}
	var tools []Tool
	for copyN := 0; len(tools) < n; copyN++ {
		for _, s := range servers {
			toolbox := strings.ToLower(strings.ReplaceAll(s.Category, " ", "-"))
			key := fmt.Sprintf("%s-%d", s.Key, copyN)
			for _, t := range s.Tools {
				var schema struct {
					Properties map[string]struct {
						Description string `json:"description"`
					} `json:"properties"`
				}
				_ = json.Unmarshal(t.InputSchema, &schema)
				var params []Param
				for _, name := range slices.Sorted(func(yield func(string) bool) {
					for k := range schema.Properties {
						if !yield(k) {
							return
						}
					}
				}) {
					params = append(params, Param{Name: name, Description: schema.Properties[name].Description})
				}
				tools = append(tools, Tool{Name: toolbox + "__" + key + "__" + t.Name, Tool: t.Name, Toolbox: toolbox, Server: key,
					Description: t.Description, Params: params, ServerDescription: s.Description})
			}
		}
	}
	return tools[:n]
}

func benchSearch(b *testing.B, tools []Tool) {
	ix := New(tools)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Search(benchQueries[i%len(benchQueries)], 10, nil)
	}
}

// BenchmarkSearch5000 searches 5,000 generated tools.
func BenchmarkSearch5000(b *testing.B) { benchSearch(b, synthetic(5000)) }

// BenchmarkSearch5000LiveMCPBench searches LiveMCPBench's 527 tools copied
// to 5,000 (skipped without the data).
func BenchmarkSearch5000LiveMCPBench(b *testing.B) { benchSearch(b, liveMCPBench(b, 5000)) }

// BenchmarkNew5000 indexes 5,000 generated tools.
func BenchmarkNew5000(b *testing.B) {
	tools := synthetic(5000)
	b.ReportAllocs()
	for b.Loop() {
		New(tools)
	}
}

// BenchmarkNew5000LiveMCPBench indexes LiveMCPBench's tools copied to
// 5,000 (skipped without the data).
func BenchmarkNew5000LiveMCPBench(b *testing.B) {
	tools := liveMCPBench(b, 5000)
	b.ReportAllocs()
	for b.Loop() {
		New(tools)
	}
}
