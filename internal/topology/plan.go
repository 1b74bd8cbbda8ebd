package topology

// overflowRejectPublish makes at-least-once dead-lettering effective: without
// it the broker silently falls back to at-most-once.
const overflowRejectPublish = "reject-publish"

// Plan resolves s and returns every exchange, queue and binding of its set,
// in a stable order: exchanges ingest, the done exchanges of levels 0 …
// N−1, out, unroutable; queues the TTL queues by level, then digit, and
// unroutable; bindings from ingest, then from each done exchange in level
// order, then the unroutable binding, then the routes in resolved order. In
// radix 2 the TTL queues are level.00 … level.(N−1). A library's layout
// plans its own objects instead: its level exchanges from 0 up, then its
// delivery exchange; its level queues; then each level's binding to its
// queue and to the next exchange; then the routes from the delivery
// exchange. The error is Resolve's.
func Plan(s Spec) (Topology, error) {
	s, err := Resolve(s)
	if err != nil {
		return Topology{}, err
	}
	layout, _ := layoutNamed(s.Layout)
	return layout.plan(s), nil
}

// plan is Plan of a resolved spec in the default layout.
func (defaultLayout) plan(s Spec) Topology {
	l := radixChain{names: Names(s.Name), radix: s.Radix, levels: s.Levels}
	n := s.Levels
	objects := newPlanNames(l, s.Generation, s.FormatGeneration)
	alternate := ExchangeArguments{AlternateExchange: objects.unroutable}

	exchanges := make([]Exchange, 0, n+3)
	exchanges = append(exchanges, Exchange{Name: objects.ingest, Type: ExchangeTopic, Arguments: alternate})
	for _, done := range objects.done {
		exchanges = append(exchanges, Exchange{Name: done, Type: ExchangeTopic, Arguments: alternate})
	}
	exchanges = append(exchanges,
		Exchange{Name: objects.out, Type: ExchangeTopic, Arguments: alternate},
		Exchange{Name: objects.unroutable, Type: ExchangeFanout},
	)

	queues := append(chainQueues(l, objects, s.CurrentGeneration()),
		Queue{Name: objects.unroutable, Arguments: QueueArguments{QueueType: s.QueueType}})

	bindings := make([]Binding, 0, l.delayBindings()+1+len(s.Routes))
	// A message at ingest still has all N digits ahead of it; after a queue
	// of level k it has the k lower digits left. Each exchange sends it to
	// the queue of its highest remaining nonzero digit and that digit's
	// value, or to out when none is left.
	bindings = l.appendDelayBindings(bindings, objects.queues, objects.out, objects.ingest, n)
	for k, done := range objects.done {
		bindings = l.appendDelayBindings(bindings, objects.queues, objects.out, done, k)
	}
	bindings = append(bindings, Binding{
		Source: objects.unroutable, Destination: objects.unroutable, DestinationType: DestinationQueue,
	})
	bindings = appendRouteBindings(bindings, objects.out, s.Routes, n)

	return Topology{VHost: s.VHost, Exchanges: exchanges, Queues: queues, Bindings: bindings}
}

// chainQueues are the TTL queues of generation g, by level, then digit;
// g's fields are resolved and its top TTL within MaxTTL.
func chainQueues(l radixChain, objects planNames, g Generation) []Queue {
	stages := l.stages()
	queues := make([]Queue, 0, len(stages)+1)
	ttl := g.Resolution.Milliseconds()
	for _, st := range stages {
		args := QueueArguments{
			MessageTTL:         ttl * l.ttlTicks(st),
			DeadLetterExchange: objects.done[st.level],
			QueueType:          g.QueueType,
			LeaderLocator:      g.QueueLeaderLocator,
		}
		if g.QueueType == QueueTypeQuorum {
			args.QuorumInitialGroupSize = g.QuorumInitialGroupSize
		}
		if g.QueueType == QueueTypeQuorum {
			args.DeadLetterStrategy = g.DeadLetterStrategy
			if g.DeadLetterStrategy == AtLeastOnce {
				args.Overflow = overflowRejectPublish
			}
		}
		queues = append(queues, Queue{Name: objects.queues[st.level][st.digit], Arguments: args})
	}
	return queues
}

// appendRouteBindings appends the bindings of out to each route, for
// messages with levels delay digits.
func appendRouteBindings(bindings []Binding, out string, routes []Route, levels int) []Binding {
	for _, r := range routes {
		bindings = append(bindings, Binding{
			Source: out, Destination: r.Destination, DestinationType: r.DestinationType,
			RoutingKey: routeBindingKey(r.Key, levels),
		})
	}
	return bindings
}

// planNames holds the object names of a set, each formatted once.
type planNames struct {
	ingest, out, unroutable string
	queues                  [][]string // by level, then digit; digit 0 has no queue
	done                    []string
}

// newPlanNames names the objects of generation's chain and the ingest and
// out exchanges of generation format.
func newPlanNames(l radixChain, generation, format int) planNames {
	chain, exchanges := l.names.Generation(generation), l.names.Generation(format)
	p := planNames{
		ingest: exchanges.Ingest(), out: exchanges.Out(), unroutable: l.names.Unroutable(),
		queues: make([][]string, l.levels), done: make([]string, l.levels),
	}
	for k := range l.levels {
		p.queues[k] = make([]string, l.radix)
		for v := 1; v < l.radix; v++ {
			p.queues[k][v] = chain.Queue(l.radix, k, v)
		}
		p.done[k] = chain.LevelDone(l.radix, k)
	}
	return p
}

// routeBindingKey matches a message whose key is the route's, followed by
// the levels delay digits; the empty key matches every message.
func routeBindingKey(key string, levels int) string {
	if key == "" {
		key = anyWords
	}
	b := make([]byte, 0, len(key)+2*levels)
	b = append(b, key...)
	return string(appendWords(b, anyWord, levels))
}
