package config

import (
	"strconv"
	"time"
)

// Tension judges ([Tensions.Judge]).
const (
	// JudgeRules: the deterministic rules alone decide (internal/tension).
	JudgeRules = "rules"
	// JudgeModel: the server's chat model is asked about each pair the
	// rules flag, and may dismiss it.
	JudgeModel = "model"
)

// Defaults of the tensions section.
const (
	DefaultJudgeTimeout  = 10 * time.Second
	DefaultJudgeMaxPairs = 5
)

// Tensions configures tension detection (the Nexus format's tensions
// section).
type Tensions struct {
	// Judge is JudgeRules (the default) or JudgeModel.
	Judge string
	// Timeout bounds the model's answer about one pair (default
	// DefaultJudgeTimeout).
	Timeout time.Duration
	// MaxPairs is how many flagged pairs of one write the model is asked
	// about at most (default DefaultJudgeMaxPairs); the others keep the
	// rules' verdict.
	MaxPairs int
}

var tensionsKeys = []string{"judge", "timeout", "maxPairs"}

// tensions reads the tensions section: judge (rules or model), timeout and
// maxPairs, each optional.
func (l *loader) tensions(f field) *Tensions {
	fields, ok := l.mapping(f.val, "tensions", "a mapping with judge (rules or model), timeout and maxPairs")
	if !ok {
		return nil
	}
	t := &Tensions{Judge: JudgeRules, Timeout: DefaultJudgeTimeout, MaxPairs: DefaultJudgeMaxPairs}
	n := len(l.errs) + l.dropped
	for _, sf := range fields {
		p := join("tensions", sf.name)
		switch sf.name {
		case "judge":
			if v, ok := l.str(sf, p); ok {
				if v != JudgeRules && v != JudgeModel {
					l.fail(l.node(sf.val), p, "%q is not a tension judge: rules (the default: the deterministic rules alone) or model (the chat model confirms what the rules flag)", v)
				}
				t.Judge = v
			}
		case "timeout":
			if d, ok := l.duration(sf, p); ok {
				t.Timeout = d
			}
		case "maxPairs":
			if v, ok := l.str(sf, p); ok {
				i, err := strconv.Atoi(v)
				if err != nil || i < 1 || i > 100 {
					l.fail(l.node(sf.val), p, "must be a whole number from 1 to 100, not %q", v)
				}
				t.MaxPairs = i
			}
		default:
			l.unknownKey(sf, "tensions", tensionsKeys, "")
		}
	}
	if len(l.errs)+l.dropped > n {
		return nil
	}
	return t
}
