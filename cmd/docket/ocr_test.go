package main

import (
	"bytes"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTesseract writes a script that answers --list-langs with langs, and returns its path.
func fakeTesseract(t *testing.T, langs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tesseract")
	body := "#!/bin/sh\necho 'List of available languages in \"/x/\":'\n"
	for _, l := range langs {
		body += "echo " + l + "\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOCRFlags(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, env map[string]string, args ...string) *serviceFlags {
		t.Helper()
		var f serviceFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.register(fs, func(k string) string { return env[k] })
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	if f := parse(t, nil); !f.ocr.on || f.ocr.lang != "eng" || f.ocr.dpi != 300 || f.ocr.command != "tesseract" {
		t.Errorf("defaults: %+v", f.ocr)
	}
	if f := parse(t, nil, "--ocr=false"); f.ocr.on {
		t.Error("--ocr=false left OCR on")
	}
	if f := parse(t, map[string]string{"DOCKET_OCR": "false", "DOCKET_OCR_LANG": "deu"}); f.ocr.on || f.ocr.lang != "deu" {
		t.Errorf("environment: %+v", f.ocr)
	}
	for _, args := range [][]string{{"--ocr-lang", "eng;rm"}, {"--ocr-dpi", "5000"}} {
		if err := parse(t, nil, args...).ocr.check(); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	if err := parse(t, nil, "--ocr=false", "--ocr-lang", "eng;rm").ocr.check(); err != nil {
		t.Errorf("settings of OCR turned off are checked: %v", err)
	}
}

// TestOCRFlags_Config: OCR is on when tesseract and the languages are there, and off with a
// warning at the start when either is missing.
func TestOCRFlags_Config(t *testing.T) {
	t.Parallel()
	tess := fakeTesseract(t, "eng", "osd")
	for _, c := range []struct {
		name     string
		flags    ocrFlags
		on       bool
		wantLogs string
	}{
		{"on", ocrFlags{on: true, command: tess, lang: "eng", dpi: 300}, true, "OCR on"},
		{"off", ocrFlags{on: false, command: tess, lang: "eng", dpi: 300}, false, ""},
		{"no tesseract", ocrFlags{on: true, command: "docket-no-such-tesseract", lang: "eng", dpi: 300}, false,
			"OCR off: tesseract not found"},
		{"no language", ocrFlags{on: true, command: tess, lang: "eng+deu", dpi: 300}, false,
			`no data for language \"deu\"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			cfg := c.flags.config(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)))
			if (cfg != nil) != c.on {
				t.Errorf("config = %+v, want on %v", cfg, c.on)
			}
			if cfg != nil && (cfg.Command != tess || cfg.Languages != c.flags.lang || cfg.DPI != 300) {
				t.Errorf("config = %+v", cfg)
			}
			if c.wantLogs == "" && logs.Len() > 0 || !strings.Contains(logs.String(), c.wantLogs) {
				t.Errorf("logs %q, want %q", logs.String(), c.wantLogs)
			}
		})
	}
}
