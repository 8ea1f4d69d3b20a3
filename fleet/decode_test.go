package fleet

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

var recordAnswers = flag.Bool("record-answers", false, "record testdata/answers from a backfilled Prometheus")

// TestRecordAnswers writes testdata/answers (with -record-answers): a real
// Prometheus's answers to every query of a refresh over 12 generated
// hosts, and to an invalid query, a range vector and a scalar.
func TestRecordAnswers(t *testing.T) {
	if !*recordAnswers {
		t.Skip("without -record-answers")
	}
	p := backfilledPrometheus(t, 12)
	u, at := p.url, p.at
	dir := filepath.Join("testdata", "answers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exprs := append(append([]string{}, queries...), "rate(", "up[5m]", "1")
	for i, q := range exprs {
		v := url.Values{"query": {q}, "time": {strconv.FormatInt(at.Unix(), 10)}}
		resp, err := http.Get(u + "/api/v1/query?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("q%02d.json", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// recorded are the answers of testdata/answers and fleetAnswers' over a
// few hosts.
func recorded(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join("testdata", "answers", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no recorded answers (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out[f] = b
	}
	for q, b := range fleetAnswers(6) {
		out["fleetAnswers "+q] = b
	}
	return out
}

// sameAnswer fails unless got is want: the same fields, samples and
// error texts.
func sameAnswer(t *testing.T, name string, got, want answer, gotErr, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", name, gotErr, wantErr)
	}
	if fmt.Sprint(got.ValueErr) != fmt.Sprint(want.ValueErr) {
		t.Fatalf("%s: value error %v, encoding/json's %v", name, got.ValueErr, want.ValueErr)
	}
	got.ValueErr, want.ValueErr = nil, nil
	if !reflect.DeepEqual(bits(got), bits(want)) {
		t.Fatalf("%s: decoded\n%+v\nencoding/json's\n%+v", name, got, want)
	}
}

// bits is a with its samples' values as their bits: NaN is a value the
// API sends, and it equals no float.
func bits(a answer) any {
	type sample struct {
		Labels Labels
		Value  uint64
	}
	var r []sample // nil for a nil Result
	for _, s := range a.Result {
		r = append(r, sample{s.Labels, math.Float64bits(s.Value)})
	}
	empty := a.Result != nil && len(a.Result) == 0
	a.Result = nil
	return []any{a, r, empty}
}

// TestDecodeRecorded: every recorded answer is decoded as encoding/json
// decodes it, and the fast path takes every vector and error answer.
func TestDecodeRecorded(t *testing.T) {
	for name, b := range recorded(t) {
		want, err := decodeJSON(b)
		got, gotErr := decodeAnswer(b)
		sameAnswer(t, name, got, want, gotErr, err)
		d := decoder{b: b, names: map[string]string{}, values: map[string]string{}}
		fast, ok := d.answer()
		if !ok {
			if want.ResultType == "vector" || want.Status == "error" {
				t.Errorf("%s: the fast path declined a real answer", name)
			}
			continue
		}
		sameAnswer(t, name, fast, want, nil, err)
	}
}

// TestDecodeOdd: answers Prometheus does not write, each decoded as
// encoding/json decodes it (the fast path declines them or agrees).
func TestDecodeOdd(t *testing.T) {
	for _, b := range []string{
		``, `null`, `[]`, `{}`, `{"status":"success"}`, `{"status":"success"} x`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","data":{"resultType":"vector","result":null}}`,
		`{"Status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"ſtatus":"success","data":{"resultType":"vector","result":[]}}`,
		`{"st\u0061tus":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","status":"error","data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","warnings":["w", 1, {"a":[true,false,null,-1.5e3]}],"data":{"resultType":"vector","result":[{"metric":{"b":"2","a":"1"},"value":[1,"3"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1","a":"2"},"value":[1,"3"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"x\"\u00e9\\"},"value":[1,"\u0031"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"\xff"},"value":[1,"1"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1e400,"1"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]},{"value":[1,2]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1","2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":null,"value":[1,"NaN"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":null},"value":[1,"+Inf"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"],}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[01,"1"]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`,
		`{"status":"success","data":{"resultType":"scalar","result":[1,"1"]}}`,
		` {"status" : "error" , "errorType":"bad_data","error":"x"} `,
	} {
		got, err := decodeAnswer([]byte(b))
		want, wantErr := decodeJSON([]byte(b))
		sameAnswer(t, b, got, want, err, wantErr)
	}
}

// FuzzDecodeAnswer: for any input the decoder gives what encoding/json
// gives, and what the fast path takes is valid JSON.
func FuzzDecodeAnswer(f *testing.F) {
	for _, b := range recorded(f) {
		if len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := decodeJSON(b)
		d := decoder{b: b, names: map[string]string{}, values: map[string]string{}}
		if fast, ok := d.answer(); ok {
			if wantErr != nil {
				t.Fatalf("the fast path took what encoding/json refuses (%v): %q", wantErr, b)
			}
			sameAnswer(t, "fast path", fast, want, nil, nil)
		}
		got, err := decodeAnswer(b)
		sameAnswer(t, "decodeAnswer", got, want, err, wantErr)
	})
}
