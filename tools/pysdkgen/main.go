// Command pysdkgen writes the generated part of the Python client
// (sdk/python/src/cryptointel/_generated.py) from the service's OpenAPI
// document (sdk/openapi.json): a TypedDict per schema and per route's
// response, and one typed method per /v1 route on a mixin the hand-written
// client extends. The output is deterministic, so regenerating an
// unchanged document gives no diff.
//
// It exists because no maintained OpenAPI-to-Python generator can be
// installed from Debian's packages (the only Python index here), and the
// document is OpenAPI 3.1 (type lists, anyOf with null), which the
// generators packaged elsewhere read only partly. It needs nothing beyond
// the standard library.
package main

//go:generate go run . ../../sdk/openapi.json ../../sdk/python/src/cryptointel/_generated.py

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

type schema map[string]any

type param struct {
	Name        string `json:"name"`
	In          string `json:"in"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
	Schema      schema `json:"schema"`
}

type operation struct {
	OperationID string  `json:"operationId"`
	Summary     string  `json:"summary"`
	Parameters  []param `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct{ Schema schema }
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema schema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

type document struct {
	Info       struct{ Version string } `json:"info"`
	Paths      map[string]map[string]operation
	Components struct {
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
}

// gen accumulates the TypedDict declarations, in order of first need.
type gen struct {
	out      bytes.Buffer
	declared map[string]bool
	decls    []string
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var pyKeywords = map[string]bool{"from": true, "in": true, "is": true, "class": true, "def": true, "global": true,
	"import": true, "lambda": true, "pass": true, "return": true, "with": true, "yield": true, "as": true, "async": true,
	"await": true, "not": true, "or": true, "and": true, "if": true, "else": true, "for": true, "while": true, "try": true,
	"except": true, "raise": true, "del": true, "None": true, "True": true, "False": true, "type": false}

// pyType returns the Python annotation of s; objects with properties
// become TypedDicts named name.
func (g *gen) pyType(s schema, name string) string {
	if s == nil {
		return "Any"
	}
	if ref, ok := s["$ref"].(string); ok {
		return strings.TrimPrefix(ref, "#/components/schemas/")
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var parts []string
		names := []string{"Full", "Lean"}
		for i, a := range alts {
			n := name
			if len(alts) == 2 && i < 2 {
				n = name + names[i]
			} else {
				n = fmt.Sprintf("%s%d", name, i)
			}
			parts = append(parts, g.pyType(schema(a.(map[string]any)), n))
		}
		return union(parts)
	}
	if enum, ok := s["enum"].([]any); ok {
		return literal(enum)
	}
	switch t := s["type"].(type) {
	case []any:
		var parts []string
		for _, x := range t {
			c := schema{}
			for k, v := range s {
				c[k] = v
			}
			c["type"] = x
			parts = append(parts, g.pyType(c, name))
		}
		return union(parts)
	case string:
		switch t {
		case "string":
			return "str"
		case "integer":
			return "int"
		case "number":
			return "float"
		case "boolean":
			return "bool"
		case "null":
			return "None"
		case "array":
			items, _ := s["items"].(map[string]any)
			return "list[" + g.pyType(schema(items), name+"Item") + "]"
		case "object":
			props, _ := s["properties"].(map[string]any)
			if len(props) == 0 {
				return "dict[str, Any]"
			}
			g.typedDict(name, s)
			return name
		}
	}
	return "Any"
}

func union(parts []string) string {
	seen := map[string]bool{}
	var out []string
	hasNone := false
	for _, p := range parts {
		if p == "None" {
			hasNone = true
			continue
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if hasNone {
		out = append(out, "None")
	}
	if len(out) == 1 {
		return out[0]
	}
	return "Union[" + strings.Join(out, ", ") + "]"
}

// typedDict declares the TypedDict name for the object schema s.
func (g *gen) typedDict(name string, s schema) {
	if g.declared[name] {
		return
	}
	g.declared[name] = true
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			req[x.(string)] = true
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var fields []string
	classSyntax := true
	for _, k := range keys {
		if !identRe.MatchString(k) || pyKeywords[k] {
			classSyntax = false
		}
	}
	for _, k := range keys {
		t := g.pyType(schema(props[k].(map[string]any)), name+export(k))
		if !req[k] {
			t = "NotRequired[" + t + "]"
		}
		fields = append(fields, fmt.Sprintf("%q: %q", k, t))
		if classSyntax {
			fields[len(fields)-1] = fmt.Sprintf("    %s: %s", k, quoteForward(t))
		}
	}
	var b strings.Builder
	desc, _ := s["description"].(string)
	if classSyntax {
		fmt.Fprintf(&b, "class %s(TypedDict):\n", name)
		if desc != "" {
			fmt.Fprintf(&b, "    %s\n", pyDoc(desc, "    "))
		}
		b.WriteString(strings.Join(fields, "\n"))
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "%s = TypedDict(%q, {%s})\n", name, name, strings.Join(fields, ", "))
	}
	g.decls = append(g.decls, b.String())
}

// quoteForward leaves annotations as written: the module uses
// `from __future__ import annotations`, so class-syntax annotations are
// strings already.
func quoteForward(t string) string { return t }

func pyDoc(s, indent string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"""`, `\"\"\"`)
	return `"""` + s + `"""`
}

// export turns a JSON key into a part of a Python class name.
func export(k string) string {
	var b strings.Builder
	up := true
	for _, r := range k {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// snake turns camelCase into snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r == '-' || r == '.' {
			b.WriteRune('_')
			continue
		}
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteRune('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// methodName: getV1EntitiesIdRelationships -> get_entities_id_relationships.
func methodName(opID string) string { return snake(strings.Replace(opID, "V1", "", 1)) }

type route struct {
	method, path, opID, name string
	legacy, cursor, stream   bool
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: pysdkgen OPENAPI.json OUT.py")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		log.Fatal(err)
	}
	g := &gen{declared: map[string]bool{}}

	// Component schemas first, in name order.
	names := make([]string, 0, len(doc.Components.Schemas))
	for n := range doc.Components.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	var aliases []string
	for _, n := range names {
		s := doc.Components.Schemas[n]
		t := g.pyType(s, n)
		if t != n {
			aliases = append(aliases, fmt.Sprintf("%s = %s\n", n, t))
		}
	}

	// Routes, by path then method.
	var paths []string
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var methods strings.Builder
	var routes []route
	for _, p := range paths {
		var verbs []string
		for m := range doc.Paths[p] {
			verbs = append(verbs, m)
		}
		sort.Strings(verbs)
		for _, m := range verbs {
			op := doc.Paths[p][m]
			r := route{method: strings.ToUpper(m), path: p, opID: op.OperationID, name: methodName(op.OperationID)}
			var respSchema schema
			status := ""
			for _, st := range []string{"200", "201", "202", "204"} {
				if resp, ok := op.Responses[st]; ok {
					status = st
					for ct, c := range resp.Content {
						if ct == "text/event-stream" {
							r.stream = true
						}
						respSchema = c.Schema
					}
					break
				}
			}
			_ = status
			for _, prm := range op.Parameters {
				switch prm.Name {
				case "legacy":
					r.legacy = true
				case "cursor":
					r.cursor = true
				}
			}
			routes = append(routes, r)
			if r.stream {
				continue // followed by the hand-written Client.stream
			}
			respName := export(r.name) + "Response"
			respType := "dict[str, Any]"
			if respSchema != nil {
				respType = g.pyType(respSchema, respName)
			}
			g.method(&methods, r, op, respType)
		}
	}

	var b bytes.Buffer
	b.WriteString(`# Code generated by tools/pysdkgen from sdk/openapi.json. DO NOT EDIT.
"""Models and route methods generated from the cryptointel OpenAPI document."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Literal, Mapping, NotRequired, Sequence, TypedDict, Union

`)
	fmt.Fprintf(&b, "API_VERSION = %q\n\n", doc.Info.Version)
	for _, d := range g.decls {
		b.WriteString("\n")
		b.WriteString(d)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, a := range aliases {
		b.WriteString(a)
	}
	b.WriteString("\n\n# Every /v1 route: (method, path, operationId, method name, takes legacy, walks a cursor).\nROUTES: list[tuple[str, str, str, str, bool, bool]] = [\n")
	for _, r := range routes {
		name := r.name
		if r.stream {
			name = "stream"
		}
		fmt.Fprintf(&b, "    (%q, %q, %q, %q, %s, %s),\n", r.method, r.path, r.opID, name, pyBool(r.legacy), pyBool(r.cursor))
	}
	b.WriteString("]\n\n\nclass _Routes:\n    \"\"\"One method per /v1 route; the client supplies _call.\"\"\"\n\n")
	b.WriteString("    if TYPE_CHECKING:\n\n        def _call(self, method: str, path: str, query: Mapping[str, Any], body: Any = None, legacy: Any = None) -> Any: ...\n\n")
	b.WriteString(methods.String())
	if err := os.WriteFile(os.Args[2], b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// paramType is the Python annotation of a parameter.
func paramType(s schema) string {
	switch s["type"] {
	case "integer":
		return "int"
	case "boolean":
		return "bool"
	case "number":
		return "float"
	case "array":
		items, _ := s["items"].(map[string]any)
		return "Sequence[" + paramType(schema(items)) + "]"
	case "string":
		if s["format"] == "date-time" {
			return "Union[_dt.datetime, str]"
		}
		if enum, ok := s["enum"].([]any); ok {
			return literal(enum)
		}
		return "str"
	}
	return "Any"
}

// literal is the Python type of an enum: Literal of its JSON values.
func literal(enum []any) string {
	lits := make([]string, 0, len(enum))
	for _, e := range enum {
		b, _ := json.Marshal(e)
		lits = append(lits, string(b))
	}
	return "Literal[" + strings.Join(lits, ", ") + "]"
}

func (g *gen) method(w *strings.Builder, r route, op operation, respType string) {
	type arg struct {
		py, wire, typ, in string
		required          bool
	}
	var args []arg
	for _, p := range op.Parameters {
		if p.In == "header" || p.Name == "legacy" {
			continue
		}
		if strings.HasPrefix(p.Description, "Alias of `") {
			continue // the canonical name covers it
		}
		py := snake(p.Name)
		if pyKeywords[py] {
			py += "_"
		}
		args = append(args, arg{py: py, wire: p.Name, typ: paramType(p.Schema), in: p.In,
			required: p.Required || p.In == "path" || strings.Contains(p.Description, " Required: give ")})
	}
	// Required first, then optional, each keyword-only after the path ids.
	sort.SliceStable(args, func(i, j int) bool { return args[i].required && !args[j].required })
	var sig []string
	sig = append(sig, "self", "*")
	for _, a := range args {
		if a.required {
			sig = append(sig, fmt.Sprintf("%s: %s", a.py, a.typ))
		} else {
			sig = append(sig, fmt.Sprintf("%s: %s | None = None", a.py, a.typ))
		}
	}
	hasBody := r.method != "GET" && r.method != "DELETE"
	if hasBody {
		sig = append(sig, "body: Mapping[str, Any] | None = None")
	}
	if r.legacy {
		sig = append(sig, "legacy: bool | None = None")
	}
	if len(sig) == 2 {
		sig = sig[:1] // no parameters
	}
	fmt.Fprintf(w, "    def %s(%s) -> %s:\n", r.name, strings.Join(sig, ", "), respType)
	doc := op.Summary
	if r.legacy {
		doc += "\n\n        Events come in the lean shape unless legacy=True (or the client's legacy=True)."
	}
	if r.cursor {
		doc += "\n\n        A cursor route: walk every page with Client.paginate(client." + r.name + ", ...)."
	}
	fmt.Fprintf(w, "        %s\n", pyDoc(fmt.Sprintf("%s %s: %s", r.method, r.path, doc), "        "))
	path := r.path
	for _, a := range args {
		if a.in == "path" {
			path = strings.ReplaceAll(path, "{"+a.wire+"}", "{"+a.py+"}")
		}
	}
	if strings.Contains(path, "{") {
		fmt.Fprintf(w, "        _path = f%q\n", path)
	} else {
		fmt.Fprintf(w, "        _path = %q\n", path)
	}
	var q []string
	for _, a := range args {
		if a.in == "query" {
			q = append(q, fmt.Sprintf("%q: %s", a.wire, a.py))
		}
	}
	body := "None"
	if hasBody {
		body = "body"
	}
	legacy := "..." // the route has no legacy parameter
	if r.legacy {
		legacy = "legacy"
	}
	fmt.Fprintf(w, "        return self._call(%q, _path, {%s}, %s, %s)\n\n", r.method, strings.Join(q, ", "), body, legacy)
}
