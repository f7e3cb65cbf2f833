package main

import (
	"strings"
	"testing"
)

// TestCheckOTLPEndpoint_Redacted: a refused --otlp-endpoint is named
// without its password (it was echoed as given).
func TestCheckOTLPEndpoint_Redacted(t *testing.T) {
	t.Parallel()
	err := checkOTLPEndpoint("ftp://collector:s3cret@127.0.0.1:4318")
	if err == nil {
		t.Fatal("an ftp endpoint was accepted")
	}
	if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "collector:xxxxx@") {
		t.Errorf("error %q: want the endpoint with its password redacted", err)
	}
}
