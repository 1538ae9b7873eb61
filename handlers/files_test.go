package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
)

// Each method's handler is in the file named for the method (doc.go: one
// file per hook or method), so a reader finds model.failed in
// model_failed.go and delegate.resolveModel in delegate_resolve_model.go
// (issue 50: model.failed had been in health.go, providers.update in
// models.go). shutdown and exit are the lifecycle's, beside initialize.
func TestEachHandlerInTheFileNamedForItsMethod(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	files := map[string]*ast.File{}
	for _, p := range pkgs {
		for name, f := range p.Files {
			files[filepath.Base(name)] = f
		}
	}

	// The Server's methods and the file each is declared in.
	declaredIn := map[string]string{}
	for name, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && isServer(fn.Recv.List[0].Type) {
				declaredIn[fn.Name.Name] = name
			}
		}
	}

	// Each route of protocol_gen.go: the contract method it serves and
	// the Server method its function calls.
	called := map[string]string{}
	ast.Inspect(files["protocol_gen.go"], func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 3 {
			return true
		}
		idx, ok := lit.Elts[0].(*ast.IndexExpr)
		if !ok {
			return true
		}
		i, err := strconv.Atoi(idx.Index.(*ast.BasicLit).Value)
		require.NoError(t, err)
		ast.Inspect(lit.Elts[2], func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "s" {
						called[contract.Methods[i].Name] = sel.Sel.Name
					}
				}
			}
			return true
		})
		return false
	})
	require.NotEmpty(t, called)

	for _, m := range contract.Methods {
		fn, ok := called[m.Name]
		if !ok {
			continue // not served by the Server's routes
		}
		want := fileFor(m.Name)
		if m.Name == contract.MethodShutdown || m.Name == contract.MethodExit {
			want = fileFor(contract.MethodInitialize)
		}
		assert.Equal(t, want, declaredIn[fn], "%s's handler %s", m.Name, fn)
	}
}

func isServer(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Server"
}

// fileFor is a method's file: its name in snake case, dots as
// underscores ("delegate.resolveModel" is delegate_resolve_model.go).
func fileFor(method string) string {
	var b strings.Builder
	for i, r := range method {
		switch {
		case r == '.':
			b.WriteByte('_')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + ".go"
}
