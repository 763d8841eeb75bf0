package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layers (docs/architecture.md): front ends translate, the application
// layer decides and records. These tests fail when code lands in the wrong
// layer.

// imports lists the imports of the non-test Go files of dir, by file.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range pf.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			out[f] = append(out[f], p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return out
}

// The command line reaches the state and git only through the application.
func TestCmdImportsNeitherStoreNorGitops(t *testing.T) {
	for file, list := range imports(t, ".") {
		for _, p := range list {
			if p == "github.com/baton-cli/baton/internal/store" || p == "github.com/baton-cli/baton/internal/gitops" {
				t.Errorf("%s imports %s: the command line calls package app, which owns the state and git", file, p)
			}
		}
	}
}

// The application knows no front end: no cobra, no terminal.
func TestAppImportsNoFrontEnd(t *testing.T) {
	for file, list := range imports(t, "../app") {
		for _, p := range list {
			if strings.HasPrefix(p, "github.com/spf13/") || p == "golang.org/x/term" || p == "github.com/baton-cli/baton/internal/cli" {
				t.Errorf("%s imports %s: package app is under every front end and imports none", file, p)
			}
		}
	}
}

// maxFuncLines is the longest a function may be outside tests and
// benchmarks.
const maxFuncLines = 80

// No function of the module, outside tests and the benchmark harness
// (bench/), is longer than maxFuncLines.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				p == filepath.Join(root, "bench")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines; split it below %d", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
