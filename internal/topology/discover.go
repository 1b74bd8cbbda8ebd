package topology

import (
	"cmp"
	"errors"
	"slices"
	"strings"
)

// Discovery: finding every delay set that one vhost holds, from one
// listing of each kind of object, for adopting them all at once. The
// objects are grouped by the set whose objects their names are ([Discover]);
// each group is inferred as an import infers it ([InferLayout]), and a group
// is a set only when its objects are exactly what the inferred spec plans,
// so that adopting it changes nothing on the broker.

// FoundSet is a delay set that [Discover] found whole.
type FoundSet struct {
	// Spec is the set's inferred spec, resolved: its current generation.
	Spec Spec
	// Draining are its draining generations, oldest first: one set, with
	// every chain it still drains.
	Draining []Generation
}

// UnreadableSet is a group of objects that [Discover] found named as a
// set's, but could not read as one whole set.
type UnreadableSet struct {
	Name   string
	Layout Layout
	// Inferred is the spec the objects describe when they describe one but
	// are not all of its set, or more or other than it: the set exists only
	// in part or was changed by hand. nil when they explain no set.
	Inferred *Spec
	// Reasons say what is wrong, each naming the objects involved: the
	// reasons the objects explain no set ([InferError]), or each object and
	// binding that an apply of Inferred would create, replace or delete.
	Reasons []string
}

// Discovery is what [Discover] found in one vhost, each list in the order
// of the sets' names, then layouts.
type Discovery struct {
	Sets       []FoundSet
	Unreadable []UnreadableSet
}

// Discover finds the delay sets among vhost, the exchanges, queues and
// bindings of one vhost as the broker lists them. Objects are grouped by
// the set whose name they bear in the first layout that names them; a group
// counts only with a level object, since names such as "billing.out" alone
// are common. A group is a found set when [InferLayout] explains it and an
// apply of the inferred spec would change nothing; otherwise it is
// unreadable, with every missing object and binding as reasons (DESIGN.md,
// "Discovery").
func Discover(vhost Topology) Discovery {
	var found Discovery
	for _, c := range groupCandidates(vhost) {
		set, unreadable := c.read()
		if unreadable != nil {
			found.Unreadable = append(found.Unreadable, *unreadable)
			continue
		}
		found.Sets = append(found.Sets, set)
	}
	return found
}

// candidate is the objects of one vhost named as one set's.
type candidate struct {
	layout  setLayout
	name    string
	objects Topology
	// level tells whether a level object is among them.
	level bool
}

// groupCandidates groups the objects of vhost by the set whose objects
// their names are, in the first layout that names them (the default layout
// first), and keeps the groups that hold a level object, sorted by name,
// then layout.
func groupCandidates(vhost Topology) []*candidate {
	type key struct {
		layout Layout
		name   string
	}
	groups := map[key]*candidate{}
	groupOf := func(object string) *candidate {
		for _, l := range layouts {
			if set, level := l.owner(object); set != "" {
				k := key{l.name(), set}
				if groups[k] == nil {
					groups[k] = &candidate{layout: l, name: set, objects: Topology{VHost: vhost.VHost}}
				}
				groups[k].level = groups[k].level || level
				return groups[k]
			}
		}
		return nil
	}
	sources := map[string]*candidate{}
	for _, e := range vhost.Exchanges {
		if c := groupOf(e.Name); c != nil {
			c.objects.Exchanges = append(c.objects.Exchanges, e)
			sources[e.Name] = c
		}
	}
	for _, q := range vhost.Queues {
		if c := groupOf(q.Name); c != nil {
			c.objects.Queues = append(c.objects.Queues, q)
		}
	}
	for _, b := range vhost.Bindings {
		if c := sources[b.Source]; c != nil {
			c.objects.Bindings = append(c.objects.Bindings, b)
		}
	}
	var candidates []*candidate
	for _, c := range groups {
		if c.level {
			candidates = append(candidates, c)
		}
	}
	slices.SortFunc(candidates, func(a, b *candidate) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(string(a.layout.name()), string(b.layout.name())))
	})
	return candidates
}

// read infers the candidate's set and checks that its objects are exactly
// the set's: the set, or why it is unreadable.
func (c *candidate) read() (FoundSet, *UnreadableSet) {
	unreadable := &UnreadableSet{Name: c.name, Layout: c.layout.name()}
	spec, draining, err := c.layout.infer(c.name, c.objects)
	var inferErr *InferError
	switch {
	case errors.As(err, &inferErr):
		unreadable.Reasons = inferErr.Reasons
		return FoundSet{}, unreadable
	case err != nil:
		unreadable.Reasons = []string{err.Error()}
		return FoundSet{}, unreadable
	}
	changes, err := adoptionChanges(spec, draining, c.objects)
	if err != nil {
		unreadable.Reasons = []string{"the inferred generations cannot be planned: " + err.Error()}
		return FoundSet{}, unreadable
	}
	if problems := changeProblems(changes, c.objects); len(problems) > 0 {
		unreadable.Inferred, unreadable.Reasons = &spec, problems
		return FoundSet{}, unreadable
	}
	return FoundSet{Spec: spec, Draining: draining}, nil
}

// adoptionChanges are the changes that an update of the set of spec, with
// its draining generations, would make to actual, the set's objects as an
// import reads them: what it plans for every generation, the parking lot
// and the draining queues kept as they are, and the delivery bindings a
// library makes for itself left to it.
func adoptionChanges(spec Spec, draining []Generation, actual Topology) ([]Change, error) {
	desired, err := PlanGenerations(spec, draining)
	if err != nil {
		return nil, err
	}
	desired = KeepParkingLot(spec.Name, desired, ParkingLotType(spec.Name, actual))
	desired = KeepDrainingQueues(spec.Name, desired, actual, draining)
	desired = KeepLibraryBindings(spec, desired, actual)
	return Diff(desired, actual), nil
}

// changeProblems says, once per object or binding, what changes would do
// to actual: what is missing, what differs (a replacement: its deletion and
// creation), what is not the set's. A binding that a replacement drops and
// creates again is no problem of its own.
func changeProblems(changes []Change, actual Topology) []string {
	have := indexTopology(actual)
	touched := map[string]int{}
	for _, c := range changes {
		touched[changedObject(c)]++
	}
	var problems []string
	for _, c := range changes {
		object := changedObject(c)
		replaced := touched[object] > 1
		switch c.Kind {
		case CreateBinding:
			if !have.hasBinding[c.Binding.Canonical()] {
				problems = append(problems, object+" is missing")
			}
		case CreateExchange, CreateQueue:
			if !replaced {
				problems = append(problems, object+" is missing")
			}
		case DeleteExchange, DeleteQueue:
			if replaced {
				problems = append(problems, object+" differs: "+c.Reason)
			} else {
				problems = append(problems, object+" is not the set's: "+c.Reason)
			}
		case DeleteBinding:
			problems = append(problems, object+" is not the set's: "+c.Reason)
		}
	}
	return problems
}

// changedObject names the object or binding a change is about: "exchange
// x", "queue x", "binding <its line>".
func changedObject(c Change) string {
	switch {
	case c.Exchange != nil:
		return "exchange " + c.Exchange.Name
	case c.Queue != nil:
		return "queue " + c.Queue.Name
	}
	return "binding " + c.Binding.String()
}

// owner is the set of the default layout that object's name is one of the
// objects of, and whether it is a TTL queue or done exchange.
func (defaultLayout) owner(object string) (set string, level bool) {
	// A set's name ends one to four words before the end of its objects'
	// (".r16.03.15.g2", ".level.03.done.g2"); no suffix is the tail of
	// another, so at most one of those prefixes names it.
	end := len(object)
	for range 4 {
		dot := strings.LastIndexByte(object[:end], '.')
		if dot <= 0 {
			break
		}
		if o := Names(object[:dot]).parse(object); o.kind != kindNone {
			return object[:dot], o.kind == kindLevel || o.kind == kindDone
		}
		end = dot
	}
	return "", false
}

// owner is the layout's own name for its level exchanges and queues and
// its delivery exchange: one set of the layout per vhost.
func (lib *library) owner(object string) (set string, level bool) {
	if _, ok := lib.parseLevel(object); ok {
		return string(lib.layout), true
	}
	if object == lib.delivery {
		return string(lib.layout), false
	}
	return "", false
}
