package topology

// overflowRejectPublish makes at-least-once dead-lettering effective: without
// it the broker silently falls back to at-most-once.
const overflowRejectPublish = "reject-publish"

// Plan resolves s and returns every exchange, queue and binding of its set,
// in a stable order: exchanges ingest, level.00.done … level.(N−1).done, out,
// unroutable; queues level.00 … level.(N−1), unroutable; bindings from
// ingest, then from each done exchange in level order, then the unroutable
// binding, then the routes in resolved order. The error is Resolve's.
func Plan(s Spec) (Topology, error) {
	s, err := Resolve(s)
	if err != nil {
		return Topology{}, err
	}
	n := s.Levels
	objects := newPlanNames(Names(s.Name), n)
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

	queues := make([]Queue, 0, n+1)
	ttl := s.Resolution.Milliseconds()
	for k := range n {
		args := QueueArguments{
			MessageTTL:         ttl << k, // within MaxTTL: Resolve checked the top level
			DeadLetterExchange: objects.done[k],
			QueueType:          s.QueueType,
		}
		if s.QueueType == QueueTypeQuorum {
			args.DeadLetterStrategy = s.DeadLetterStrategy
			if s.DeadLetterStrategy == AtLeastOnce {
				args.Overflow = overflowRejectPublish
			}
		}
		queues = append(queues, Queue{Name: objects.levels[k], Arguments: args})
	}
	queues = append(queues, Queue{Name: objects.unroutable, Arguments: QueueArguments{QueueType: s.QueueType}})

	bindings := make([]Binding, 0, n+1+n*(n+1)/2+1+len(s.Routes))
	// A message at ingest still has all N digits ahead of it; after level k's
	// queue it has the k lower digits left. Each exchange sends it to the level
	// of its highest remaining set digit, or to out when none is left.
	bindings = appendDelayBindings(bindings, objects, objects.ingest, n)
	for k, done := range objects.done {
		bindings = appendDelayBindings(bindings, objects, done, k)
	}
	bindings = append(bindings, Binding{
		Source: objects.unroutable, Destination: objects.unroutable, DestinationType: DestinationQueue,
	})
	for _, r := range s.Routes {
		bindings = append(bindings, Binding{
			Source: objects.out, Destination: r.Destination, DestinationType: r.DestinationType,
			RoutingKey: routeBindingKey(r.Key, n),
		})
	}

	return Topology{VHost: s.VHost, Exchanges: exchanges, Queues: queues, Bindings: bindings}, nil
}

// planNames holds the object names of a set, each formatted once.
type planNames struct {
	ingest, out, unroutable string
	levels, done            []string
}

func newPlanNames(names Names, levels int) planNames {
	p := planNames{
		ingest: names.Ingest(), out: names.Out(), unroutable: names.Unroutable(),
		levels: make([]string, levels), done: make([]string, levels),
	}
	for k := range levels {
		p.levels[k], p.done[k] = names.Level(k), names.Done(k)
	}
	return p
}

// appendDelayBindings appends the bindings of an exchange that sees the
// remaining lowest digits of a message's delay: to level j for j = remaining−1
// … 0 when digit j is the highest set one ("#.0^(remaining−1−j).1.*^j"), and
// to out when all are zero ("#.0^remaining").
func appendDelayBindings(bindings []Binding, objects planNames, source string, remaining int) []Binding {
	key := make([]byte, 0, 2*remaining+1) // "#" and remaining more words of one byte
	for j := remaining - 1; j >= 0; j-- {
		key = appendWords(key[:0], anyWords, 1)
		key = appendWords(key, digitZero, remaining-1-j)
		key = appendWords(key, digitOne, 1)
		key = appendWords(key, anyWord, j)
		bindings = append(bindings, Binding{
			Source: source, Destination: objects.levels[j], DestinationType: DestinationQueue, RoutingKey: string(key),
		})
	}
	key = appendWords(key[:0], anyWords, 1)
	key = appendWords(key, digitZero, remaining)
	return append(bindings, Binding{
		Source: source, Destination: objects.out, DestinationType: DestinationExchange, RoutingKey: string(key),
	})
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
