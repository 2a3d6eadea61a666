package rest

import (
	"encoding/json"
	"go/constant"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
)

// errorsPage is the caller's reference of every error code and message.
var errorsPage = filepath.Join("..", "docs", "api", "errors.md")

// errorCodeName matches the names of the domain's error code constants
// (cryptointel.EINVALID, …).
var errorCodeName = regexp.MustCompile(`^E[A-Z]+$`)

// TestErrorsPageIsCurrent holds docs/api/errors.md to the code: every error
// code of the domain is a row of the error table, the page's code table is
// the one tools/errorsdoc generates from it, every code appears in it with
// its status, and every message constant (an exported string constant named
// Msg…, in any package of the module) appears word for word. A new code or
// message, or a changed one, fails here until the page says it.
func TestErrorsPageIsCurrent(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(errorsPage)
	require.NoError(t, err)
	page := string(raw)

	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}, "./...")
	require.NoError(t, err)
	var codes, messages []string
	for _, p := range pkgs {
		require.Empty(t, p.Errors, "loading %s", p.PkgPath)
		if p.Types == nil || strings.Contains(p.PkgPath, "/tools/") {
			continue
		}
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			c, ok := scope.Lookup(name).(*types.Const)
			if !ok || !c.Exported() || c.Val().Kind() != constant.String {
				continue
			}
			val := constant.StringVal(c.Val())
			switch {
			case p.Name == "cryptointel" && errorCodeName.MatchString(name):
				codes = append(codes, val)
			case strings.HasPrefix(name, "Msg"):
				messages = append(messages, p.Name+"."+name+"\x00"+val)
			}
		}
	}
	require.NotEmpty(t, codes, "no error codes found in package cryptointel")
	require.ElementsMatch(t, codes, httperr.Codes(), "every error code (E… constant) has one row in the error table (httperr.Table), and every row a constant")
	generated, err := httperr.SpliceCodes(page)
	require.NoError(t, err)
	if generated != page {
		require.Contains(t, page, httperr.CodesMarkdown(), "docs/api/errors.md's code table is not the error table's: run go generate ./...")
		require.Fail(t, "docs/api/errors.md has more than the error table between its code-table markers: run go generate ./...")
	}
	require.NotEmpty(t, messages, "no message constants found")
	sort.Strings(codes)
	sort.Strings(messages)
	var missing []string
	for _, code := range codes {
		if row := "`" + code + "` | " + strconv.Itoa(StatusOf(code)) + " |"; !strings.Contains(page, row) {
			missing = append(missing, "code table row "+row)
		}
	}
	for _, m := range messages {
		name, val, _ := strings.Cut(m, "\x00")
		if !strings.Contains(page, "`"+val+"`") {
			missing = append(missing, name+": `"+val+"`")
		}
	}
	require.Empty(t, missing, "docs/api/errors.md lacks these (quote each message in backquotes, word for word)")
	t.Logf("errors page: %d codes and %d messages checked", len(codes), len(messages))
}

// TestOpenAPIErrorSchemaIsTheTable holds the OpenAPI Error schema to the
// error table: its code enum lists every code of the table, and the body
// WriteError writes has exactly the schema's members.
func TestOpenAPIErrorSchemaIsTheTable(t *testing.T) {
	t.Parallel()
	doc := OpenAPI(nil)
	errSchema := doc["components"].(map[string]any)["schemas"].(schema)["Error"].(schema)
	props := errSchema["properties"].(schema)
	var enum []string
	for _, v := range props["code"].(schema)["enum"].([]any) {
		enum = append(enum, v.(string))
	}
	require.Equal(t, httperr.Codes(), enum, "the Error schema's code enum")
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	b, err := json.Marshal(httperr.NewBody(cryptointel.EINVALID, "limit must be an integer", "req-1"))
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(b, &body))
	require.Equal(t, "limit", body["param"])
	require.ElementsMatch(t, names, slices.Collect(maps.Keys(body)))
}
