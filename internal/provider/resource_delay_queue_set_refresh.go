package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// The steps of Read: the read of a set the state knows or of one just
// imported, then the refresh of the state from what was read.

// isImportStub tells whether state is what ImportState writes: the name,
// the vhost and perhaps the layout, nothing read from the broker yet.
func isImportStub(state delayQueueSetModel) bool {
	return state.Levels.IsNull()
}

// cannotImport is the error of an import whose objects explain no set,
// the detail ending with hint.
func cannotImport(vhost, name string, err error, hint string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("Cannot Import the Delay Queue Set",
		fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s%s", name, vhost, err, hint))
}
