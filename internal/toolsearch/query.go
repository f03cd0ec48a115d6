package toolsearch

import (
	"github.com/nexus-mcp/nexus/internal/textsearch"

	"strings"
	"unicode"
)

// What a request says besides its words. A request is not a tool's
// description: it names files by their paths, pastes encoded data, speaks
// of "tomorrow" and wraps what it wants in politeness. These are read here,
// the same way for any catalog:
//
//   - a blob (base64, a hash, a token: a long run of letters and digits
//     with no separator) is data, not words, and is left out;
//   - a file path means files: the word "file" (or "directory", for a path
//     with no extension) and its type's words (report.md: markdown;
//     deck.pptx: presentation, powerpoint) are implied;
//   - a relative time (tomorrow, next Wednesday, the past three days) has
//     to be resolved against the current date, so "date" and "time" are
//     implied;
//   - the words a request is phrased in (help, please, want, tell, give)
//     name no tool and are dropped, as stop words are.
//
// Implied words weigh impliedWeight, as a synonym does. What a request
// does to a path implies a phrase too, the action on the thing: a path
// saved to, "write file" (and "create presentation" for a .pptx); a path
// read, "read file"; a relative time, "current date" and "current time".
// A tool that says the phrase gets impliedWeight of what a phrase the
// request says would give it (phraseWeight).

// impliedWeight is how much a word a request implies counts, against a
// word it says.
const impliedWeight = 0.5

// blobLen is the length from which a run of letters and digits is a blob.
const blobLen = 40

// requestWords phrase a request and name nothing a tool does.
var requestWords = setOf(
	"help", "please", "want", "need", "tell", "give", "let", "lets",
	"kindly", "thanks", "thank", "could", "can", "would", "like", "also",
)

// extensionWords are the words of a file type, by extension.
var extensionWords = map[string]string{
	"md": "markdown", "markdown": "markdown", "txt": "text", "log": "log text",
	"csv": "csv", "tsv": "csv", "json": "json", "xml": "xml", "yaml": "yaml", "yml": "yaml",
	"xlsx": "excel spreadsheet", "xls": "excel spreadsheet",
	"docx": "word document", "doc": "word document",
	"pptx": "powerpoint presentation", "ppt": "powerpoint presentation",
	"pdf": "pdf", "html": "html", "htm": "html",
	"png": "image", "jpg": "image", "jpeg": "image", "gif": "image", "webp": "image", "svg": "image",
	"mp3": "audio", "wav": "audio", "flac": "audio", "mp4": "video", "mov": "video",
	"py": "code python", "js": "code javascript", "ts": "code typescript", "go": "code",
	"java": "code java", "c": "code", "cpp": "code", "rs": "code rust",
	"zip": "archive", "tar": "archive", "gz": "archive",
}

// documentKinds are the kinds of document that a file of a type holds,
// for the types that are made by a tool of their own (create a document,
// a presentation) rather than written as text.
var documentKinds = map[string]string{
	"docx": "document", "doc": "document",
	"pptx": "presentation", "ppt": "presentation",
	"xlsx": "workbook", "xls": "workbook",
}

// sinkOf is, as a request of its own, what saving a file of type ext
// takes: creating the kind of document it is (create presentation
// powerpoint), or writing a file of its type (write file markdown).
func sinkOf(ext string) string {
	if k, ok := documentKinds[ext]; ok {
		return "create " + k + " " + extensionWords[ext]
	}
	return strings.TrimSpace("write file " + extensionWords[ext])
}

// timeWords speak of a time relative to now.
var timeWords = setOf(
	"tomorrow", "yesterday", "tonight",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)

// timeUnits follow next, last, past or coming in a relative time.
var timeUnits = setOf(
	"day", "days", "week", "weeks", "weekend", "month", "months", "year", "years",
	"hour", "hours", "quarter", "future",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// request is a request read: its text to search for and what it implies.
type request struct {
	text    string   // the request without its blobs and paths' punctuation
	implied []string // words it implies
	// phrases it implies: pairs of words ("write file") that a tool
	// saying together is likely to be what the request needs.
	phrases [][2]string
	// sink is what writing the file the request saves to is, as a
	// request of its own ("write file markdown").
	sink string
}

// readRequest reads query.
func readRequest(query string) request {
	var r request
	var text strings.Builder
	fields := strings.Fields(query)
	var paths, files, writes, reads bool
	var made []string // the kinds of document the paths name
	last := ""        // the last file path's extension: a request reads first and saves last
	for i, f := range fields {
		if isBlob(f) {
			continue
		}
		chunk := strings.Trim(f, ".,;:!?\"'`()[]{}<>")
		if ext, ok := pathOf(chunk); ok {
			paths = true
			if ext == "" {
				r.implied = append(r.implied, "directory")
			} else {
				r.implied = append(r.implied, "file")
				files = true
				last = ext
				if k, ok := documentKinds[ext]; ok {
					made = append(made, k)
				}
				if w, ok := extensionWords[ext]; ok {
					r.implied = append(r.implied, w)
				}
			}
		}
		lower := strings.ToLower(chunk)
		if timeWords[lower] || (relativeTime[lower] && i+1 < len(fields) && isTimeUnit(fields[i+1:])) {
			r.implied = append(r.implied, "current", "date", "time")
			r.phrases = append(r.phrases, [2]string{"current", "date"}, [2]string{"current", "time"})
		}
		switch {
		case writeVerbs[lower]:
			writes = true
		case readVerbs[lower]:
			reads = true
		}
		text.WriteString(f)
		text.WriteByte(' ')
	}
	if paths {
		if writes {
			r.implied = append(r.implied, "write")
			if files {
				r.phrases = append(r.phrases, [2]string{"write", "file"})
				r.sink = sinkOf(last)
			}
			for _, k := range made {
				r.phrases = append(r.phrases, [2]string{"create", k})
			}
		}
		if reads {
			r.implied = append(r.implied, "read")
			if files {
				r.phrases = append(r.phrases, [2]string{"read", "file"})
			}
		}
	}
	r.text = text.String()
	return r
}

// writeVerbs and readVerbs, in a request that names a file, say that the
// file is written or read.
var (
	writeVerbs = setOf("save", "saved", "write", "create", "generate", "draft", "make", "store", "export", "output", "put")
	readVerbs  = setOf("read", "open", "load", "view", "extract", "parse", "get", "contents")
)

// relativeTime are the words before a unit of time that make it relative
// to now.
var relativeTime = setOf("next", "last", "past", "coming", "near", "previous")

// isTimeUnit reports whether the words after next, last... are a unit of
// time, with maybe a number first (the past three days).
func isTimeUnit(rest []string) bool {
	for i, f := range rest {
		if i == 2 {
			break
		}
		w := strings.ToLower(strings.Trim(f, ".,;:!?\"'`()"))
		if timeUnits[w] {
			return true
		}
		if !isNumber(w) {
			return false
		}
	}
	return false
}

var numberWords = setOf("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "few", "several", "24", "48")

func isNumber(w string) bool {
	if numberWords[w] {
		return true
	}
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// isBlob reports whether f holds a run of letters and digits (and base64's
// + / =) of blobLen or more.
func isBlob(f string) bool {
	run := 0
	for _, r := range f {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' || r == '/' || r == '=') {
			run++
			if run >= blobLen {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// pathOf reports whether chunk is a file path (/root/a/report.md, ~/x,
// ./y, report.md with a known extension) and its extension, lower-cased
// ("" for a directory). A URL is not a path.
func pathOf(chunk string) (ext string, ok bool) {
	if strings.Contains(chunk, "://") || strings.HasPrefix(chunk, "www.") {
		return "", false
	}
	slash := strings.HasPrefix(chunk, "/") || strings.HasPrefix(chunk, "~/") || strings.HasPrefix(chunk, "./")
	base := chunk[strings.LastIndexByte(chunk, '/')+1:]
	if dot := strings.LastIndexByte(base, '.'); dot > 0 {
		ext = strings.ToLower(base[dot+1:])
		if _, known := extensionWords[ext]; known || (slash && isExtension(ext)) {
			return ext, true
		}
	}
	if slash && len(chunk) > 1 && strings.Count(chunk, "/") >= 2 {
		return "", true
	}
	return "", false
}

// isExtension reports whether ext looks like a file extension: 1 to 5
// letters and digits.
func isExtension(ext string) bool {
	if len(ext) == 0 || len(ext) > 5 {
		return false
	}
	for _, r := range ext {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// weakTerms are the stems of qualifiers: words that say which or how
// (current, latest, all, top...) but name nothing a tool does or works on.
// A tool is a hit only if it matches a word that is not one of these
// (Index.strongConcepts).
var weakTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"current", "currently", "latest", "recent", "recently", "new", "newest", "today", "now",
		"all", "every", "best", "top", "good", "great", "first", "last", "next", "many", "much", "more", "most",
		"some", "any", "one", "thing", "things", "something", "stuff", "way", "information", "info", "details",
	} {
		m[textsearch.Stem(w)] = true
	}
	return m
}()
