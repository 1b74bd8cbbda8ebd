package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FieldError is one problem with one field of a [Spec] or of a routing-key
// argument. Field is spelled as in Terraform ("levels", "route.key", …) so
// that the provider can attach it to the right attribute.
type FieldError struct {
	Field string
	// Route is the index of the route the error is about, or -1.
	Route   int
	Message string
}

// Error renders the field path and the message: "levels: …", or "route[1].key: …"
// for an error about a route.
func (e *FieldError) Error() string {
	path := e.Field
	if e.Route >= 0 {
		if rest, ok := strings.CutPrefix(e.Field, "route"); ok {
			path = fmt.Sprintf("route[%d]%s", e.Route, rest)
		}
	}
	return path + ": " + e.Message
}

// ValidationErrors holds every problem [Validate] found, in the order of the
// fields: name, generation, vhost, layout, levels, max_delay, resolution,
// radix, queue_type, dead_letter_strategy, queue_leader_locator,
// quorum_initial_group_size, then each route in turn.
type ValidationErrors []*FieldError

// Error joins the messages of every problem with "; ".
func (errs ValidationErrors) Error() string {
	messages := make([]string, len(errs))
	for i, e := range errs {
		messages[i] = e.Error()
	}
	return strings.Join(messages, "; ")
}

// Validate reports every problem of s at once, each naming its field and the
// allowed range or values, or returns nil. It never panics.
func Validate(s Spec) error {
	var v specValidator
	v.name(s.Name)
	// A layout no set has is reported, and the rest checked as the default's.
	layout, layoutErr := layoutNamed(s.Layout)
	layout.checkGeneration(&v, s)
	v.vhost(s.VHost)
	v.addErr(layoutErr)
	layout.checkFields(&v, s)
	return v.result()
}

// checkFields checks the fields of a spec of the default layout.
func (defaultLayout) checkFields(v *specValidator, s Spec) {
	// The levels checks need the resolution, but its errors come after theirs,
	// in the order of the fields.
	resolution, resolutionErr := resolvedResolution(s.Resolution)
	radix := radixOrDefault(s.Radix)
	radixErr := checkRadix(radix)
	if radixErr != nil {
		radix = DefaultRadix // for the checks that need one; the TTL checks are skipped
	}
	levels, levelsOK := v.levels(s.Levels, s.MaxDelay, radix, resolution, resolutionErr == nil && radixErr == nil)
	v.addErr(resolutionErr)
	v.addErr(radixErr)
	v.queueType(s.QueueType, s.DeadLetterStrategy)
	v.leaderLocator(s.QueueLeaderLocator)
	v.quorumGroupSize(s.QuorumInitialGroupSize, s.QueueType)
	ownObject := func(destination string) bool {
		return s.Name != "" && Names(s.Name).parse(destination).kind != kindNone
	}
	v.routes(s.Routes, ownObject, func(route int, key string) { v.routeKey(route, key, levels, radix, levelsOK) })
}

// Resolve validates s and returns its canonical form: Levels set (derived
// from MaxDelay when needed, fixed by a library's layout) and MaxDelay
// zero, every default spelled out but the default layout's (an empty
// Layout), routes sorted by destination type, destination and key, and a
// nil Routes slice when there are none. Two specs that plan the same
// topology resolve to equal specs.
func Resolve(s Spec) (Spec, error) {
	if err := Validate(s); err != nil {
		return Spec{}, err
	}
	layout, _ := layoutNamed(s.Layout)
	s = layout.resolve(s)
	var routes []Route
	for _, r := range s.Routes {
		routes = append(routes, r.canonical())
	}
	slices.SortFunc(routes, compareRoutes)
	s.Routes = routes
	return s, nil
}

// resolve spells out the defaults of a valid spec of the default layout.
func (defaultLayout) resolve(s Spec) Spec {
	s.Layout = ""
	if s.Resolution == 0 {
		s.Resolution = DefaultResolution
	}
	s.Radix = radixOrDefault(s.Radix)
	if s.Levels == 0 {
		// Validate has checked that MaxDelay needs at most the levels that fit.
		s.Levels = smallestLevels(s.MaxDelay, s.Radix, s.Resolution)
		s.MaxDelay = 0
	}
	if s.QueueType == "" {
		s.QueueType = QueueTypeQuorum
	}
	if s.DeadLetterStrategy == "" {
		s.DeadLetterStrategy = defaultDeadLetterStrategy(s.QueueType)
	}
	return s
}

// UnsetLeaderLocator is the leader locator of desired, a resolved spec
// whose owner names none, for a set whose current generation current
// describes (nil for a new set). While the set's queues stay as they are,
// it is current's, so that a set made before the locator existed keeps its
// queues and plans no change. When a change declares new queues anyway (a
// new set, or another queue type, strategy, radix or resolution), it is
// the default of the new queues: balanced for quorum queues of a layout of
// this provider's, so that they spread over a cluster; none for classic
// queues, which refuse the argument before RabbitMQ 4.0, and in a
// library's layout, whose queues are the library's byte for byte.
func UnsetLeaderLocator(desired Spec, current *Spec) LeaderLocator {
	if current != nil {
		desired.QueueLeaderLocator = current.QueueLeaderLocator
		if desired.CurrentGeneration().sameQueues(current.CurrentGeneration()) {
			return current.QueueLeaderLocator
		}
	}
	if layout, _ := layoutNamed(desired.Layout); layout.declaredByLibrary() || desired.QueueType != QueueTypeQuorum {
		return ""
	}
	return LeaderLocatorBalanced
}

// NewSet is spec resolved as Terraform creates a set of it, or an error as
// [Resolve] reports it. A new set has no current generation whose queues
// it keeps, so a spec that names no leader locator gets that of new queues
// ([UnsetLeaderLocator] with no current set): balanced for quorum queues of
// a layout of this provider's. What plans or declares a set as the
// provider's resource creates it (the data source, tests, benchmarks)
// starts from it.
func NewSet(spec Spec) (Spec, error) {
	resolved, err := Resolve(spec)
	if err != nil {
		return Spec{}, err
	}
	if resolved.QueueLeaderLocator == "" {
		resolved.QueueLeaderLocator = UnsetLeaderLocator(resolved, nil)
	}
	return resolved, nil
}

// defaultDeadLetterStrategy is at-least-once where the queue type supports it.
func defaultDeadLetterStrategy(t QueueType) DeadLetterStrategy {
	if t == QueueTypeClassic {
		return AtMostOnce
	}
	return AtLeastOnce
}

func compareRoutes(a, b Route) int {
	return cmp.Or(
		cmp.Compare(a.DestinationType, b.DestinationType),
		cmp.Compare(a.Destination, b.Destination),
		cmp.Compare(a.Key, b.Key),
	)
}

// MaxDelayFor is the longest delay a set of levels levels at resolution
// holds, (2^levels − 1)·resolution. It saturates at the largest Duration
// instead of overflowing, and is 0 when levels or resolution is not positive.
func MaxDelayFor(levels int, resolution time.Duration) time.Duration {
	if levels < 1 || resolution <= 0 {
		return 0
	}
	return maxDelayFor(levels, 2, resolution)
}

// LevelsFor is the smallest number of levels whose longest delay at
// resolution reaches maxDelay. It refuses a non-positive maxDelay, a
// resolution that is not a whole number of milliseconds of at least 1ms, and
// a maxDelay that needs more levels than fit at resolution: MaxLevels, or
// fewer where the top level's TTL would pass the broker's MaxTTL.
func LevelsFor(maxDelay, resolution time.Duration) (int, error) {
	if err := checkResolution(resolution); err != nil {
		return 0, err
	}
	if maxDelay <= 0 {
		return 0, maxDelayNotPositive(maxDelay)
	}
	limit := maxLevelsAt(2, resolution)
	if levels := smallestLevels(maxDelay, 2, resolution); levels <= limit {
		return levels, nil
	}
	return 0, maxDelayTooLong(maxDelay, 2, resolution, limit)
}

// maxDelayNotPositive refuses a max_delay below zero, or set to zero (see [ExplicitZero]).
func maxDelayNotPositive(maxDelay time.Duration) *FieldError {
	return &FieldError{Field: "max_delay", Route: -1, Message: fmt.Sprintf("must be positive, got %s", maxDelay)}
}

// maxDelayTooLong refuses a max_delay beyond the limit levels of radix that
// fit at resolution.
func maxDelayTooLong(maxDelay time.Duration, radix int, resolution time.Duration, limit int) *FieldError {
	withRadix := ""
	if radix != 2 {
		withRadix = fmt.Sprintf(" with radix %d", radix)
	}
	return &FieldError{Field: "max_delay", Route: -1, Message: fmt.Sprintf(
		"%s needs more levels than fit at resolution %s%s (at most %d, each level's TTL at most %dms); the largest max_delay at this resolution is %s",
		maxDelay, resolution, withRadix, limit, MaxTTL, maxDelayFor(limit, radix, resolution))}
}

// ExplicitZero is the problem with levels, max_delay, resolution, radix or
// quorum_initial_group_size set to zero on purpose, in the words [Validate]
// uses for the field's other values out of range, or nil for another field.
// A [Spec] reads a zero as unset, so only the caller can tell an explicit
// zero, and refuse it with this.
func ExplicitZero(field string) *FieldError {
	switch field {
	case "levels":
		return checkLevels(0, 2, DefaultResolution)
	case "max_delay":
		return maxDelayNotPositive(0)
	case "resolution":
		return checkResolution(0)
	case "radix":
		return checkRadix(0)
	case groupSizeField:
		return groupSizeBelowOne(0)
	}
	return nil
}

// checkResolution accepts a resolved (non-zero) tick: whole milliseconds,
// because TTLs are integer milliseconds, from 1ms to the broker's largest TTL.
func checkResolution(resolution time.Duration) *FieldError {
	switch {
	case resolution < MinResolution:
		return &FieldError{Field: "resolution", Route: -1, Message: fmt.Sprintf(
			"must be at least %s, got %s", MinResolution, resolution)}
	case resolution%time.Millisecond != 0:
		return &FieldError{Field: "resolution", Route: -1, Message: fmt.Sprintf(
			"must be a whole number of milliseconds (message TTLs are integer milliseconds), got %s", resolution)}
	case resolution.Milliseconds() > MaxTTL:
		return &FieldError{Field: "resolution", Route: -1, Message: fmt.Sprintf(
			"must be at most the broker's largest message TTL, %dms (10 years), got %s", MaxTTL, resolution)}
	}
	return nil
}

// maxLevelsAt is the most levels a set of radix at resolution can have with
// its top queue's TTL, resolution·(radix−1)·radix^(N−1) (resolution·2^(N−1)
// in radix 2), within the broker's MaxTTL; at most MaxLevels.
func maxLevelsAt(radix int, resolution time.Duration) int {
	ttl := resolution.Milliseconds()
	levels := 0
	for levels < MaxLevels && ttl >= 1 && ttl <= MaxTTL/topTTLFactor(levels+1, radix) {
		levels++
	}
	return levels
}

// checkLevels accepts a number of levels a set of radix at the (valid)
// resolution can have.
func checkLevels(levels, radix int, resolution time.Duration) *FieldError {
	if levels < MinLevels || levels > MaxLevels {
		return &FieldError{Field: "levels", Route: -1, Message: fmt.Sprintf(
			"must be between %d and %d, got %d", MinLevels, MaxLevels, levels)}
	}
	limit := maxLevelsAt(radix, resolution)
	if levels > limit && radix != 2 {
		return tooManyLevelsForRadix(levels, radix, resolution, limit)
	}
	if levels > limit {
		return &FieldError{Field: "levels", Route: -1, Message: fmt.Sprintf(
			"%d levels at resolution %s give the top level a TTL of %dms·2^%d, above the broker's largest message TTL %dms (10 years); at most %d levels fit at this resolution",
			levels, resolution, resolution.Milliseconds(), levels-1, MaxTTL, limit)}
	}
	return nil
}

// checkLevelsAndResolution accepts the levels and resolution of a valid set of radix.
func checkLevelsAndResolution(levels, radix int, resolution time.Duration) *FieldError {
	if err := checkResolution(resolution); err != nil {
		return err
	}
	return checkLevels(levels, radix, resolution)
}

// specValidator collects every problem of a spec.
type specValidator struct {
	errs ValidationErrors
}

func (v *specValidator) add(field string, route int, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Field: field, Route: route, Message: fmt.Sprintf(format, args...)})
}

func (v *specValidator) addErr(err *FieldError) {
	if err != nil {
		v.errs = append(v.errs, err)
	}
}

// fixed adds a problem with field when refused.
func (v *specValidator) fixed(refused bool, field, format string, args ...any) {
	if refused {
		v.add(field, -1, format, args...)
	}
}

// result is the problems found, or nil.
func (v *specValidator) result() error {
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs
}

// CheckKey reports what makes key unusable as the key of a routing key
// (and of a route) whatever the set: a wildcard or an empty word. Its length
// depends on the levels, which [EncodeKey] checks. Errors are
// [ValidationErrors] about "key".
func CheckKey(key string) error {
	var errs ValidationErrors
	for _, problem := range keyProblems(key) {
		errs = append(errs, &FieldError{Field: "key", Route: -1, Message: problem})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// keyProblems are CheckKey's findings; the empty key, every message's, has none.
func keyProblems(key string) []string {
	var problems []string
	if strings.ContainsAny(key, "#*") {
		problems = append(problems, fmt.Sprintf("must not contain '#' or '*': the set appends the delay digits to the key, and a wildcard would match the wrong messages; got %q", key))
	}
	if problem := emptyWordProblem(key); problem != "" {
		problems = append(problems, problem)
	}
	return problems
}

// emptyWordProblem says why a key has an empty word, or "" when it has
// none; the empty key has no words at all.
func emptyWordProblem(key string) string {
	if key != "" && (strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") || strings.Contains(key, "..")) {
		return fmt.Sprintf("must not start or end with '.' nor contain an empty word (\"..\"), got %q", key)
	}
	return ""
}

// nameCharacters describes the characters allowed in a set name.
const nameCharacters = "ASCII letters, digits, '.', '_', '-' and ':'"

func (v *specValidator) name(name string) {
	if name == "" {
		v.add("name", -1, "must not be empty; use %s", nameCharacters)
		return
	}
	if len(name) > MaxSetNameLength {
		v.add("name", -1, "must be at most %d bytes so that every object name (the longest is \"<name>%s\") fits AMQP's %d bytes, got %d",
			MaxSetNameLength, Names("").Done(0), MaxNameLength, len(name))
	}
	v.nameCharacters(name)
}

// nameCharacters checks what a name of a set or delayed exchange may hold
// whatever its length.
func (v *specValidator) nameCharacters(name string) {
	for i, r := range name {
		if r >= utf8.RuneSelf || !isNameByte(byte(r)) {
			v.add("name", -1, "has the character %q at byte %d; only %s are allowed", r, i, nameCharacters)
			break
		}
	}
	if strings.HasPrefix(name, "amq.") {
		v.add("name", -1, "must not start with \"amq.\": the broker reserves those names")
	}
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		v.add("name", -1, "must not start or end with '.' nor contain \"..\", got %q", name)
	}
}

// MaxGeneration is the highest generation number: far more changes than a
// set sees, and names that stay readable.
const MaxGeneration = 999_999

// generations checks the generation numbers, and that the names of the
// generation fit AMQP's limit as generation 0's do.
func (v *specValidator) generations(name string, generation, format int) {
	if generation < 0 || generation > MaxGeneration {
		v.add("generation", -1, "must be from 0 to %d, got %d", MaxGeneration, generation)
		return
	}
	if format < 0 || format > generation {
		v.add("generation", -1, "the exchanges' generation must be from 0 to the set's generation %d, got %d", generation, format)
		return
	}
	suffix := Names("").Generation(generation).LevelDone(2, 0) // the longest
	if len(name) <= MaxSetNameLength && len(name)+len(suffix) > MaxNameLength {
		v.add("name", -1, "must be at most %d bytes for generation %d of the set's queues, whose longest name (\"<name>%s\") must fit AMQP's %d bytes, got %d",
			MaxNameLength-len(suffix), generation, suffix, MaxNameLength, len(name))
	}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == ':'
}

// brokerString reports why s cannot name a vhost or a route's destination,
// or "" when it can.
func brokerString(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > MaxNameLength:
		return fmt.Sprintf("must be at most %d bytes, got %d", MaxNameLength, len(s))
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return fmt.Sprintf("must not contain control characters, got %q", s)
	}
	return ""
}

func (v *specValidator) vhost(vhost string) {
	if problem := brokerString(vhost); problem != "" {
		v.add("vhost", -1, "%s (any UTF-8 text up to %d bytes without control characters)", problem, MaxNameLength)
	}
}

// resolvedResolution applies the default resolution and checks it.
func resolvedResolution(resolution time.Duration) (time.Duration, *FieldError) {
	if resolution == 0 {
		return DefaultResolution, nil
	}
	return resolution, checkResolution(resolution)
}

// levels checks levels and max_delay and returns the number of levels when
// it can be known.
func (v *specValidator) levels(levels int, maxDelay time.Duration, radix int, resolution time.Duration, resolutionOK bool) (int, bool) {
	switch {
	case levels != 0 && maxDelay != 0:
		v.add("levels", -1, "conflicts with max_delay: set exactly one of levels and max_delay")
		v.add("max_delay", -1, "conflicts with levels: set exactly one of levels and max_delay")
		return 0, false
	case levels == 0 && maxDelay == 0:
		v.add("levels", -1, "set exactly one of levels (%d to %d) and max_delay", MinLevels, MaxLevels)
		return 0, false
	case levels != 0:
		if levels < MinLevels || levels > MaxLevels {
			v.addErr(checkLevels(levels, radix, resolution))
			return 0, false
		}
		if resolutionOK {
			v.addErr(checkLevels(levels, radix, resolution)) // the top level's TTL
		}
		// Even when the TTL is too long, N is known and route keys can be checked against it.
		return levels, true
	}
	if maxDelay < 0 {
		v.addErr(maxDelayNotPositive(maxDelay))
		return 0, false
	}
	if !resolutionOK {
		return 0, false
	}
	if limit := maxLevelsAt(radix, resolution); maxDelay > maxDelayFor(limit, radix, resolution) {
		v.addErr(maxDelayTooLong(maxDelay, radix, resolution, limit))
		return 0, false
	}
	return smallestLevels(maxDelay, radix, resolution), true
}

func (v *specValidator) queueType(queueType QueueType, strategy DeadLetterStrategy) {
	v.knownQueueKind(queueType, strategy)
	if queueType == QueueTypeClassic && strategy == AtLeastOnce {
		v.add("dead_letter_strategy", -1, "%q needs queue_type %q: classic queues can only dead-letter at-most-once",
			AtLeastOnce, QueueTypeQuorum)
	}
}

// leaderLocator refuses a locator that no set has, and tells whether it is
// known (or unset).
func (v *specValidator) leaderLocator(locator LeaderLocator) bool {
	known := locator == "" || slices.Contains(LeaderLocators, locator)
	v.fixed(!known, "queue_leader_locator", "must be one of %s, got %q", quoteAll(LeaderLocators), locator)
	return known
}

// knownQueueKind refuses a queue type or strategy that no set has, and
// tells whether each is known (or unset).
func (v *specValidator) knownQueueKind(queueType QueueType, strategy DeadLetterStrategy) (typeKnown, strategyKnown bool) {
	typeKnown = queueType == "" || slices.Contains(QueueTypes, queueType)
	strategyKnown = strategy == "" || slices.Contains(DeadLetterStrategies, strategy)
	v.fixed(!typeKnown, "queue_type", "must be one of %s, got %q", quoteAll(QueueTypes), queueType)
	v.fixed(!strategyKnown, "dead_letter_strategy", "must be one of %s, got %q", quoteAll(DeadLetterStrategies), strategy)
	return typeKnown, strategyKnown
}

func quoteAll[T ~string](values []T) string {
	quoted := make([]string, len(values))
	for i, value := range values {
		quoted[i] = fmt.Sprintf("%q", value)
	}
	return strings.Join(quoted, ", ")
}

// routes checks each route: its destination, which must not be one of the
// set's own objects (ownObject), its destination type, its key (checkKey,
// which depends on the layout), and that no route repeats another.
func (v *specValidator) routes(routes []Route, ownObject func(string) bool, checkKey func(route int, key string)) {
	firstIndex := make(map[Route]int, len(routes))
	for i, r := range routes {
		if problem := brokerString(r.Destination); problem != "" {
			v.add("route.destination", i, "%s (a queue or exchange name up to %d bytes without control characters)", problem, MaxNameLength)
		} else if ownObject(r.Destination) {
			v.add("route.destination", i, "%q is one of the set's own objects: routing delivered messages back into the set would loop", r.Destination)
		}
		if r.DestinationType != "" && !slices.Contains(DestinationTypes, r.DestinationType) {
			v.add("route.destination_type", i, "must be one of %s, got %q", quoteAll(DestinationTypes), r.DestinationType)
		}
		checkKey(i, r.Key)

		r = r.canonical()
		if first, seen := firstIndex[r]; seen {
			v.add("route", i, "duplicates route[%d]: same destination_type %q, destination %q and key %q",
				first, r.DestinationType, r.Destination, r.Key)
		} else {
			firstIndex[r] = i
		}
	}
}

func (v *specValidator) routeKey(route int, key string, levels, radix int, levelsOK bool) {
	for _, problem := range keyProblems(key) {
		v.add("route.key", route, "%s", problem)
	}
	if key != "" && levelsOK {
		if longest := maxKeyLength(levels, radix); len(key) > longest {
			v.add("route.key", route, "must be at most %d bytes with %d levels: the routing key adds %d delay digits and must fit AMQP's %d bytes; got %d",
				longest, levels, levels, MaxNameLength, len(key))
		}
	}
}
