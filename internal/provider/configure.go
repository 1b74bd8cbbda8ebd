package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// configuredData is the provider data that Configure hands a resource or a
// data source (kind, for the diagnostic): nil before the provider is
// configured (validation), a diagnostic when it is of another type.
func configuredData(data any, kind string) (*providerData, diag.Diagnostics) {
	var diags diag.Diagnostics
	if data == nil {
		return nil, diags
	}
	configured, ok := data.(*providerData)
	if !ok {
		diags.AddError(fmt.Sprintf("Unexpected %s Configure Type", kind),
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", data))
	}
	return configured, diags
}
