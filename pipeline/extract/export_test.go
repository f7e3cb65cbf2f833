package extract

import "time"

// EngineReachesModule reports whether e can reach an instance's wazero module, which is how a
// running call is stopped at its deadline without racing on go-pdfium's instance fields.
func EngineReachesModule(e *PDFEngine) (bool, error) {
	inst, err := e.pool.GetInstance(10 * time.Second)
	if err != nil {
		return false, err
	}
	defer inst.Close()
	return moduleOf(inst) != nil, nil
}

// LongString is longString.
var LongString = longString
