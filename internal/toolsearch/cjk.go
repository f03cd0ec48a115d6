package toolsearch

import (
	"strings"
	"unicode"
)

// Chinese text. Chinese is written without spaces, so words() takes a run
// of Han characters as one word, which matches nothing. Tools are often
// described in Chinese while people ask in English (and the other way
// round), so a run is indexed as:
//
//   - its overlapping bigrams (the usual indexing of CJK text, as
//     Lucene's CJKAnalyzer does), so that a Chinese query matches Chinese
//     text;
//   - the English words of the glossary's entries it holds, longest first
//     (forward maximum matching), so that an English query matches
//     Chinese text.
//
// The glossary is the general vocabulary of what tools do and work on
// (search, news, trending, stock, weather, file...), the same words as
// synonyms.go's, not the names of any product or tool.

// isHan reports whether r is a Han character.
func isHan(r rune) bool { return r >= 0x2E80 && unicode.Is(unicode.Han, r) }

// glossaryMax is the length, in runes, of the glossary's longest entry.
var glossaryMax = func() int {
	n := 0
	for k := range glossary {
		n = max(n, len([]rune(k)))
	}
	return n
}()

// hanWords are the words of a run of Han characters: its bigrams and the
// English words of the glossary entries in it.
func hanWords(run []rune, out []string) []string {
	if len(run) == 1 {
		out = append(out, string(run))
	}
	for i := 0; i+1 < len(run); i++ {
		out = append(out, string(run[i:i+2]))
	}
	for i := 0; i < len(run); {
		n := min(glossaryMax, len(run)-i)
		for ; n > 1; n-- {
			if _, ok := glossary[string(run[i:i+n])]; ok {
				break
			}
		}
		if en, ok := glossary[string(run[i:i+n])]; ok {
			out = append(out, strings.Fields(en)...)
		}
		i += n
	}
	return out
}

// glossary is Chinese words with their English.
var glossary = map[string]string{
	// actions
	"获取": "get", "搜索": "search", "查询": "query search", "查找": "find", "检索": "search",
	"查看": "view", "列出": "list", "显示": "show", "推荐": "recommend recommendation",
	"创建": "create", "生成": "generate", "添加": "add", "插入": "insert", "删除": "delete",
	"更新": "update", "修改": "modify", "编辑": "edit", "保存": "save", "写入": "write",
	"读取": "read", "阅读": "read reading", "下载": "download", "上传": "upload", "转换": "convert",
	"翻译": "translate", "分析": "analyze analysis", "统计": "statistics", "计算": "calculate",
	"比较": "compare", "对比": "compare", "复制": "copy", "替换": "replace", "合并": "merge",
	"导出": "export", "导入": "import", "发送": "send", "发布": "publish", "解析": "parse",
	"预测": "forecast predict", "监控": "monitor", "排序": "sort", "过滤": "filter",
	// things
	"新闻": "news", "资讯": "news information", "快讯": "news", "要闻": "news headlines",
	"热榜": "trending hot ranking", "热搜": "trending hot search", "热门": "popular hot trending",
	"热点": "hot trending topics", "排行榜": "ranking leaderboard", "排行": "ranking", "榜单": "ranking list",
	"排名": "ranking rank", "趋势": "trends", "话题": "topics", "动态": "updates news",
	"科技": "technology tech", "技术": "technology technical", "商业": "business", "创业": "startup",
	"财经": "finance financial", "经济": "economy economic", "金融": "finance financial",
	"投资": "investment", "投融资": "investment financing", "股票": "stock", "股价": "stock price",
	"市场": "market", "价格": "price", "汇率": "exchange rate", "货币": "currency",
	"加密货币": "crypto cryptocurrency", "比特币": "bitcoin", "公司": "company",
	"政治": "politics", "时政": "politics current affairs", "社会": "society social", "国际": "international world",
	"全球": "global world", "娱乐": "entertainment", "体育": "sports", "健康": "health", "医疗": "medical health",
	"教育": "education", "文化": "culture", "艺术": "art", "科学": "science", "历史": "history",
	"游戏": "game gaming", "电子游戏": "video game gaming", "玩家": "player gamer", "角色": "character role",
	"视频": "video", "音乐": "music", "电影": "movie film", "电视剧": "tv series", "综艺": "variety show",
	"动画": "animation anime", "图书": "books", "书籍": "books", "小说": "novel fiction", "文学": "literature",
	"文章": "article articles", "评论": "review comment", "评测": "review", "评分": "rating score",
	"问答": "questions answers", "讨论": "discussion", "教程": "tutorial", "指南": "guide", "攻略": "guide tips",
	"开发": "development developer", "开发者": "developer", "软件": "software", "应用": "app application",
	"编程": "programming code", "代码": "code", "前端": "frontend", "后端": "backend", "架构": "architecture",
	"云计算": "cloud computing", "人工智能": "ai artificial intelligence", "数码": "digital gadgets",
	"互联网": "internet web", "网络": "network internet", "网页": "web page webpage", "网站": "website",
	"链接": "link url", "产品": "product products", "硬件": "hardware", "设备": "device devices",
	"商品": "goods products", "优惠": "deals discounts", "购物": "shopping", "消费": "consumer consumption",
	"购买": "buy purchase",
	"天气": "weather", "气温": "temperature", "地图": "map", "位置": "location", "地址": "address",
	"城市": "city", "地点": "place location", "路线": "route", "导航": "navigation", "距离": "distance",
	"车站": "station", "火车": "train", "列车": "train", "火车站": "train station", "车次": "train number",
	"车票": "ticket tickets", "余票": "tickets available", "航班": "flight", "机票": "flight ticket",
	"酒店": "hotel", "餐厅": "restaurant", "美食": "food", "菜谱": "recipe recipes", "食谱": "recipe recipes",
	"菜品": "dish dishes", "食材": "ingredients", "做菜": "cooking", "烹饪": "cooking", "膳食": "meal diet",
	"时间": "time", "日期": "date", "当前": "current", "今天": "today", "日历": "calendar", "黄历": "almanac calendar",
	"农历": "lunar calendar", "公历": "gregorian calendar solar", "阳历": "solar calendar", "时区": "timezone",
	"节日": "holiday festival", "天文": "astronomy",
	"用户": "user", "账号": "account", "文件": "file", "文件夹": "folder directory", "目录": "directory",
	"路径": "path", "文档": "document", "表格": "table spreadsheet", "幻灯片": "slide slides", "演示文稿": "presentation",
	"图片": "image picture", "图像": "image", "照片": "photo", "图表": "chart", "卡牌": "card cards",
	"卡片": "card", "数据": "data", "信息": "information info", "详情": "details", "详细": "detailed",
	"列表": "list", "名称": "name", "关键词": "keywords", "关键字": "keyword", "结果": "results",
	"摘要": "summary abstract", "标题": "title", "内容": "content", "格式": "format", "模板": "template",
	"组件": "component components", "示例": "example examples", "文本": "text", "效果": "effect",
	"技能": "skills", "装备": "equipment gear", "数学": "math", "论文": "paper papers", "专利": "patent",
	"邮件": "email", "消息": "message", "聊天": "chat", "日志": "log logs", "更新日志": "changelog",
}
