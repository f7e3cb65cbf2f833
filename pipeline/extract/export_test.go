package extract

import "time"

// EngineCallsImplementation reports whether e parses documents through its instances'
// implementation (Pdfium.GetImplementation), which is what lets a kill at the deadline run
// beside the call it stops without racing on the instance's own state.
func EngineCallsImplementation(e *PDFEngine) (bool, error) {
	inst, err := e.pool.GetInstance(10 * time.Second)
	if err != nil {
		return false, err
	}
	defer inst.Close()
	_, ok := inst.GetImplementation().(pdfiumCalls)
	return ok, nil
}
