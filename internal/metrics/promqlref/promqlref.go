/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package promqlref lists the metric names and label names a PromQL
// expression refers to, so tests can check the dashboard and alerts in
// examples/monitoring against what the provider exports.
//
// Prometheus's own parser (github.com/prometheus/prometheus/promql/parser)
// would raise the project's Kubernetes modules by two minor versions, so
// this is a small extractor instead. It fails closed: a construct it does
// not know (a function missing from its list, a selector without a metric
// name, a Grafana variable outside a string) is an error, never skipped.
package promqlref

import (
	"regexp"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Selector is one vector selector: a metric and the labels it matches on.
type Selector struct {
	Metric string
	Labels []string
}

// Refs is what an expression refers to.
type Refs struct {
	Selectors []Selector
	// Grouping are the labels of by, without, on and ignoring clauses.
	Grouping []string
}

// aggregations may be followed by a by/without clause before their
// argument list.
var aggregations = set("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
	"bottomk", "topk", "quantile", "limitk", "limit_ratio")

// functions are PromQL's functions this extractor accepts.
var functions = set("rate", "irate", "increase", "delta", "idelta", "deriv", "histogram_quantile", "time",
	"min_over_time", "max_over_time", "avg_over_time", "sum_over_time", "count_over_time", "last_over_time",
	"absent", "absent_over_time", "abs", "ceil", "floor", "round", "clamp", "clamp_min", "clamp_max",
	"changes", "resets", "timestamp", "vector", "scalar", "sort", "sort_desc")

// keywords are binary operators and modifiers spelled as words.
var keywords = set("and", "or", "unless", "bool", "atan2", "offset")

// groupingClauses take a parenthesised list of label names.
var groupingClauses = set("by", "without", "on", "ignoring", "group_left", "group_right")

func set(words ...string) map[string]bool {
	out := make(map[string]bool, len(words))
	for _, w := range words {
		out[w] = true
	}
	return out
}

// grafanaInterval matches Grafana's interval variables, which stand for a
// duration.
var grafanaInterval = regexp.MustCompile(`\$\{?__(rate_interval|interval|range)\}?`)

// Parse lists what expr refers to. Grafana's interval variables are read
// as a duration; any other variable must be inside a string.
func Parse(expr string) (Refs, error) {
	toks, err := tokenize(grafanaInterval.ReplaceAllString(expr, "5m"))
	if err != nil {
		return Refs{}, err
	}
	p := &parser{toks: toks}
	if err := p.run(); err != nil {
		return Refs{}, errors.Wrapf(err, "cannot read %q", expr)
	}
	sort.Strings(p.refs.Grouping)
	return p.refs, nil
}

type kind int

const (
	ident kind = iota
	str
	number
	punct
)

type token struct {
	kind kind
	text string
}

// tokenize splits expr into identifiers, strings, numbers (durations
// included) and punctuation.
func tokenize(expr string) ([]token, error) {
	var out []token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'' || c == '`':
			j, err := stringEnd(expr, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{str, expr[i+1 : j]})
			i = j + 1
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			j := scanWhile(expr, i, func(b byte) bool { return isIdentChar(b) || b == '.' })
			out = append(out, token{number, expr[i:j]})
			i = j
		case isIdentStart(c):
			j := scanWhile(expr, i, isIdentChar)
			out = append(out, token{ident, expr[i:j]})
			i = j
		case strings.IndexByte("(){}[],+-*/%^@<>=!~", c) >= 0:
			j := i + 1
			if j < len(expr) && (expr[j] == '=' || expr[j] == '~') && strings.IndexByte("=!<>", c) >= 0 {
				j++
			}
			out = append(out, token{punct, expr[i:j]})
			i = j
		default:
			return nil, errors.Errorf("unexpected %q in %q", c, expr)
		}
	}
	return out, nil
}

// stringEnd returns the index of the quote closing the string that starts
// at expr[start]; backslash escapes do not apply in a raw (backquoted) one.
func stringEnd(expr string, start int) (int, error) {
	q := expr[start]
	j := start + 1
	for j < len(expr) && expr[j] != q {
		if expr[j] == '\\' && q != '`' {
			j++
		}
		j++
	}
	if j >= len(expr) {
		return 0, errors.Errorf("unterminated string in %q", expr)
	}
	return j, nil
}

// scanWhile returns the index of the first byte from start on that ok
// refuses.
func scanWhile(expr string, start int, ok func(byte) bool) int {
	j := start
	for j < len(expr) && ok(expr[j]) {
		j++
	}
	return j
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

type parser struct {
	toks []token
	i    int
	refs Refs
}

func (p *parser) peek(off int) token {
	if p.i+off < len(p.toks) {
		return p.toks[p.i+off]
	}
	return token{kind: punct}
}

func (p *parser) run() error {
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		var err error
		switch {
		case t.kind == punct && t.text == "{":
			err = errors.New("a selector without a metric name")
		case t.kind == punct && t.text == "[":
			err = p.skipRange()
		case t.kind == ident:
			err = p.word(t.text)
		default:
			p.i++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// word reads an identifier: an aggregation, function, keyword, grouping
// clause or metric name.
func (p *parser) word(w string) error {
	next := p.peek(1)
	switch {
	case groupingClauses[w]:
		p.i++
		if next.text == "(" {
			labels, err := p.labelList()
			p.refs.Grouping = append(p.refs.Grouping, labels...)
			return err
		}
		return nil
	case aggregations[w] && (next.text == "(" || groupingClauses[next.text]):
		p.i++
		return nil
	case keywords[w]:
		p.i++
		return nil
	case next.kind == punct && next.text == "(":
		if !functions[w] {
			return errors.Errorf("unknown function %s", w)
		}
		p.i++
		return nil
	}
	p.i++
	sel := Selector{Metric: w}
	if next.kind == punct && next.text == "{" {
		labels, err := p.matchers()
		if err != nil {
			return errors.Wrapf(err, "in the selector of %s", w)
		}
		sel.Labels = labels
	}
	p.refs.Selectors = append(p.refs.Selectors, sel)
	return nil
}

// labelList reads "(a, b)" at the current token.
func (p *parser) labelList() ([]string, error) {
	var out []string
	for p.i++; p.i < len(p.toks); p.i++ {
		switch t := p.toks[p.i]; {
		case t.text == ")":
			p.i++
			return out, nil
		case t.kind == ident:
			out = append(out, t.text)
		case t.text != ",":
			return nil, errors.Errorf("unexpected %q in a label list", t.text)
		}
	}
	return nil, errors.New("unterminated label list")
}

// matchers reads `{label op "value", ...}` at the current token.
func (p *parser) matchers() ([]string, error) {
	var out []string
	for p.i++; p.i < len(p.toks); {
		t := p.toks[p.i]
		switch {
		case t.text == "}":
			p.i++
			return out, nil
		case t.text == ",":
			p.i++
		case t.kind == ident && p.peek(1).kind == punct && p.peek(2).kind == str:
			if op := p.peek(1).text; op != "=" && op != "!=" && op != "=~" && op != "!~" {
				return nil, errors.Errorf("unexpected matcher operator %q", op)
			}
			out = append(out, t.text)
			p.i += 3
		default:
			return nil, errors.Errorf("unexpected %q in a matcher", t.text)
		}
	}
	return nil, errors.New("unterminated selector")
}

// skipRange skips a range or subquery "[5m]", "[1h:5m]".
func (p *parser) skipRange() error {
	for p.i++; p.i < len(p.toks); p.i++ {
		if p.toks[p.i].text == "]" {
			p.i++
			return nil
		}
	}
	return errors.New("unterminated range")
}
