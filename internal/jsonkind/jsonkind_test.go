package jsonkind

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
)

func TestName(t *testing.T) {
	for _, tt := range []struct {
		value, want string
	}{
		{`"x"`, "a string"}, {`1.5`, "a number"}, {`true`, "a boolean"}, {`false`, "a boolean"},
		{`null`, "null"}, {`{}`, "an object"}, {`[]`, "an array"},
	} {
		assert.Equal(t, tt.want, Name(jsontext.Value(tt.value).Kind()), tt.value)
	}
	assert.Equal(t, "a value of kind invalid", Name(0))
}
