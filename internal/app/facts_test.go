package app

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// TestReadFactsAsEncodingJSON: the facts a reader takes from a stamp are
// the facts encoding/json decodes, for facts as baton writes them and for
// facts edited outside it.
func TestReadFactsAsEncodingJSON(t *testing.T) {
	written, _ := json.Marshal(jsondoc.Facts{
		"sessions": {Count: 10024, MaxID: 10025, Last: [2]int{7199176, 7199962}, Span: [2]int{134, 7199966}},
		"reviews":  {Count: 0, Last: [2]int{0, 0}, Span: [2]int{15, 17}, Digest: "5d35"},
	})
	for _, raw := range []string{
		string(written),
		`{}`, ``, `null`, `[]`, `{"sessions":{"count":3}`, `{"sessions":null}`, `{"sessions":"x"}`, `{"sessions":[1,2]}`,
		`{"sessions":{"COUNT":3,"Max_ID":4,"LAST":[1,2],"Span":[3,4]}}`,
		`{"sessions":{"count":3,"count":5},"sessions":{"max_id":7}}`,
		`{"sessions":{"count":3,"count":"x","max_id":2,"max_id":null}}`,
		`{"sessions":{"count":1.5,"max_id":1e3,"last":[1.5,2],"span":[99999999999999999999,1]}}`,
		`{"sessions":{"count":-1,"last":[1,2,3],"span":[5]}}`,
		`{"sessions":{"last":[1,2],"last":["x"]}}`,
		`{"sessions":{"last":[1,2],"last":null,"span":[1,2],"span":7}}`,
		`{"\u0073essions":{"count":2}}`,
		`{"sessions":{"count":2,"extra":{"count":9}}}`,
		`{"reviews":{"digest":"ab","DIGEST":"cd"}}`, `{"reviews":{"digest":"ab","digest":null}}`, `{"reviews":{"digest":5}}`,
	} {
		var want jsondoc.Facts
		_ = json.Unmarshal([]byte(raw), &want)
		if got := readFacts([]byte(raw)); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("%s: readFacts gives %+v, encoding/json %+v", raw, got, want)
		}
	}
}
