package sqlite

// EngineLine is the engine's migration line, for checks of its files.
func EngineLine() MigrationLine { return engineLine }
