package clearing

import (
	_ "embed"
	"strings"
)

// State is a federal state as an ISO 3166-2:DE code ("DE-BY"), or one of
// the two rows that are no state: Abroad and Unmapped.
type State string

const (
	// Abroad is the row of travellers living outside Germany (the
	// tariff setting "not-germany").
	Abroad State = "not-germany"
	// Unmapped is the row of ticket months whose postal code gives no
	// state: unknown to the table, a code the table leaves undecided, or
	// no postal code at all. Its postal codes are listed, never guessed.
	Unmapped State = "unmapped"
)

// States are the 16 federal states in the order of their ISO codes.
var States = []State{"DE-BB", "DE-BE", "DE-BW", "DE-BY", "DE-HB", "DE-HE", "DE-HH", "DE-MV",
	"DE-NI", "DE-NW", "DE-RP", "DE-SH", "DE-SL", "DE-SN", "DE-ST", "DE-TH"}

// Rows are the states and the two other rows, in the order reports list them.
var Rows = append(append([]State{}, States...), Abroad, Unmapped)

var stateNames = map[State]string{"DE-BB": "Brandenburg", "DE-BE": "Berlin", "DE-BW": "Baden-Württemberg",
	"DE-BY": "Bayern", "DE-HB": "Bremen", "DE-HE": "Hessen", "DE-HH": "Hamburg", "DE-MV": "Mecklenburg-Vorpommern",
	"DE-NI": "Niedersachsen", "DE-NW": "Nordrhein-Westfalen", "DE-RP": "Rheinland-Pfalz", "DE-SH": "Schleswig-Holstein",
	"DE-SL": "Saarland", "DE-SN": "Sachsen", "DE-ST": "Sachsen-Anhalt", "DE-TH": "Thüringen"}

// Name is a state's German name ("" for Abroad and Unmapped).
func (s State) Name() string { return stateNames[s] }

// Valid reports whether s is one of the report's rows.
func (s State) Valid() bool { return s == Abroad || s == Unmapped || stateNames[s] != "" }

//go:embed states.svg.txt
var statesSVG string

// Shape is a state's outline as an SVG path in the view box MapViewBox.
type Shape struct {
	State State
	Name  string
	Path  string
}

// MapViewBox is the SVG view box of the shapes.
var MapViewBox string

// Shapes are the 16 states' outlines (isellsoap/deutschlandGeoJSON,
// public domain), projected by tools/clearingdata.
var Shapes []Shape

func init() {
	for _, line := range strings.Split(strings.TrimSpace(statesSVG), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if f[0] == "viewBox" {
			MapViewBox = f[2]
			continue
		}
		Shapes = append(Shapes, Shape{State: State(f[0]), Name: f[1], Path: f[2]})
	}
}
