package main

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"

	"github.com/docketq/docket/pipeline/extract"
)

// ocrFlags configure the OCR of scanned PDF pages (extract.OCRConfig).
type ocrFlags struct {
	on      bool   // --ocr
	command string // --ocr-command: the tesseract executable, looked up on PATH
	lang    string // --ocr-lang
	dpi     int    // --ocr-dpi
}

func (f *ocrFlags) register(e *envFlags) {
	e.boolVar(&f.on, "ocr", "DOCKET_OCR", true,
		"read PDF pages that have no text layer (scans) with Tesseract OCR, when tesseract is installed; "+
			"off, such pages stay empty with the warning \""+extract.WarnNoTextLayer+"\"")
	e.stringVar(&f.command, "ocr-command", "DOCKET_OCR_COMMAND", "tesseract",
		"the Tesseract executable (5.x), a path or a name looked up on PATH")
	e.stringVar(&f.lang, "ocr-lang", "DOCKET_OCR_LANG", extract.DefaultOCRLanguages,
		"Tesseract languages joined by '+', e.g. eng+deu; each needs its data installed (Debian: tesseract-ocr-LANG)")
	e.intVar(&f.dpi, "ocr-dpi", "DOCKET_OCR_DPI", extract.DefaultOCRDPI,
		"resolution pages are rendered at for OCR (72 to 1200)")
}

// check reports settings that cannot work, whether tesseract is installed or not.
func (f *ocrFlags) check() error {
	if !f.on {
		return nil
	}
	if err := (extract.OCRConfig{Command: f.command, Languages: f.lang, DPI: f.dpi}).Validate(); err != nil {
		return fmt.Errorf("--ocr-lang %q, --ocr-dpi %d: %w", f.lang, f.dpi, err)
	}
	return nil
}

// config returns the OCR configuration the flags ask for, or nil when OCR is off: turned off,
// or tesseract or one of its languages missing, which is logged as a warning once, here.
func (f *ocrFlags) config(ctx context.Context, logger *slog.Logger) *extract.OCRConfig {
	if !f.on {
		return nil
	}
	path, err := exec.LookPath(f.command)
	if err != nil {
		logger.Warn("OCR off: tesseract not found; scanned PDF pages get no text "+
			"(install tesseract-ocr and tesseract-ocr-eng, or set --ocr-command; --ocr=false silences this)",
			"command", f.command, "err", err)
		return nil
	}
	cfg := &extract.OCRConfig{Command: path, Languages: f.lang, DPI: f.dpi}
	if _, err := extract.ProbeOCR(ctx, *cfg); err != nil {
		logger.Warn("OCR off: scanned PDF pages get no text", "command", path, "err", err)
		return nil
	}
	logger.Info("OCR on", "command", path, "languages", f.lang, "dpi", f.dpi)
	return cfg
}
