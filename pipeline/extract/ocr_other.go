//go:build !linux

package extract

import "syscall"

// ocrProcAttr: only Linux kills a tesseract process with the process that started it.
func ocrProcAttr() *syscall.SysProcAttr { return nil }

// limitOCRProcess: outside Linux, a tesseract process is bounded by its page's deadline only.
func limitOCRProcess(int, *OCRConfig) error { return nil }
