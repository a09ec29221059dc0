package account

// ActorType says who made a change recorded in the books (docs/books.md).
type ActorType string

const (
	// ActorAPIKey is a partner's request; the actor id is the key id.
	ActorAPIKey ActorType = "api_key"
	// ActorOperator is the operator CLI; the actor id is the OS user.
	ActorOperator ActorType = "operator"
	// ActorJob is a background job; the actor id is the job kind.
	ActorJob ActorType = "job"
)

// Actor is who made a change: its type and id.
type Actor struct {
	Type ActorType
	ID   string
}

// ActorOf is the actor of a partner's request with principal p.
func ActorOf(p Principal) Actor { return Actor{Type: ActorAPIKey, ID: p.KeyID} }
