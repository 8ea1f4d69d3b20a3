// Package testutil holds the helpers the tests of every package share:
// golden files, the bundled captures and skips that say why.
//
// # Golden files
//
// Golden(t, name, got) compares got with testdata/<TestName>/<name>.golden
// of the calling package. After a change that alters output, regenerate
// and review the diff:
//
//	go test ./... -run Golden -update && git diff --stat -- '*.golden'
//
// The diff is the review: a golden file is never regenerated to hide an
// unexplained change.
package testutil
