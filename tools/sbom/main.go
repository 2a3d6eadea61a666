// Command sbom writes a CycloneDX 1.5 JSON software bill of materials for a
// Go binary from the build information the Go toolchain embeds in it (what
// `go version -m BINARY` prints): the main module, every module linked in
// with its version and go.sum hash, the Go toolchain and the build settings.
// The output depends only on the binary and SOURCE_DATE_EPOCH (the
// document's timestamp), so a reproducible build gets a byte-identical SBOM.
//
//	go run ./tools/sbom -o cryptointel.cdx.json dist/cryptointel
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type component struct {
	BOMRef     string     `json:"bom-ref"`
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

type bom struct {
	BOMFormat    string `json:"bomFormat"`
	SpecVersion  string `json:"specVersion"`
	SerialNumber string `json:"serialNumber"`
	Version      int    `json:"version"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Tools     struct {
			Components []component `json:"components"`
		} `json:"tools"`
		Component component `json:"component"`
	} `json:"metadata"`
	Components   []component  `json:"components"`
	Dependencies []dependency `json:"dependencies"`
}

func main() {
	out := flag.String("o", "", "write the SBOM here (default: standard output)")
	name := flag.String("name", "", "the component's name (default: the last element of the main module's path)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: sbom [-o FILE] [-name NAME] BINARY")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	b, err := build(flag.Arg(0), *name, os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbom: %v\n", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(b) //nolint:errcheck
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "sbom: %v\n", err)
		os.Exit(1)
	}
}

func purl(path, version string) string {
	return "pkg:golang/" + path + "@" + version
}

// goSumHash turns a go.sum "h1:" hash (base64 SHA-256 of the module's file
// tree) into hex, the form CycloneDX hashes take.
func goSumHash(sum string) []hash {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return nil
	}
	raw, err := decodeBase64(b64)
	if err != nil || len(raw) != sha256.Size {
		return nil
	}
	return []hash{{Alg: "SHA-256", Content: hex.EncodeToString(raw)}}
}

func build(binary, name, epoch string) ([]byte, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("%s carries no Go build information: %w", binary, err)
	}
	ts := time.Unix(0, 0).UTC()
	if epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", epoch)
		}
		ts = time.Unix(sec, 0).UTC()
	}
	sum := sha256.Sum256(bin)
	if name == "" {
		name = info.Main.Path[strings.LastIndex(info.Main.Path, "/")+1:]
	}

	var doc bom
	doc.BOMFormat = "CycloneDX"
	doc.SpecVersion = "1.5"
	// A serial number derived from the binary: the same binary, the same
	// document (RFC 4122 layout, version 5 bits).
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	doc.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	doc.Version = 1
	doc.Metadata.Timestamp = ts.Format(time.RFC3339)
	doc.Metadata.Tools.Components = []component{{BOMRef: "tool:sbom", Type: "application", Name: "cryptointel tools/sbom"}}

	mainVersion := info.Main.Version
	var props []property
	props = append(props, property{Name: "go:toolchain", Value: info.GoVersion})
	for _, s := range info.Settings {
		props = append(props, property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	mainRef := purl(info.Main.Path, mainVersion)
	doc.Metadata.Component = component{
		BOMRef: mainRef, Type: "application", Name: name, Version: mainVersion, PURL: mainRef,
		Hashes: []hash{{Alg: "SHA-256", Content: hex.EncodeToString(sum[:])}}, Properties: props,
	}

	var refs []string
	doc.Components = []component{}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		ref := purl(m.Path, m.Version)
		c := component{BOMRef: ref, Type: "library", Name: m.Path, Version: m.Version, PURL: ref, Hashes: goSumHash(m.Sum)}
		if d.Replace != nil {
			c.Properties = []property{{Name: "go:replaces", Value: d.Path + "@" + d.Version}}
		}
		doc.Components = append(doc.Components, c)
		refs = append(refs, ref)
	}
	sort.Slice(doc.Components, func(i, j int) bool { return doc.Components[i].BOMRef < doc.Components[j].BOMRef })
	sort.Strings(refs)
	doc.Components = append(doc.Components, component{
		BOMRef: "pkg:golang/std@" + info.GoVersion, Type: "library", Name: "std", Version: info.GoVersion,
		PURL: "pkg:golang/std@" + info.GoVersion,
	})
	doc.Dependencies = []dependency{{Ref: mainRef, DependsOn: append(refs, "pkg:golang/std@"+info.GoVersion)}}

	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}
