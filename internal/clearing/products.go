package clearing

import (
	"bytes"

	"github.com/farebox/farebox/internal/catalog"
)

// National are the ids of the catalog's national monthly products: the
// monthly products that take the residence postal code as a tariff
// setting (the national ticket and its variants, such as the job ticket).
func National(products []catalog.Product) []string {
	var ids []string
	for _, p := range products {
		if p.TicketType == "month" && bytes.Contains(p.TariffSettingsSchema, []byte(`"`+PostalField+`"`)) {
			ids = append(ids, p.ID)
		}
	}
	return ids
}
