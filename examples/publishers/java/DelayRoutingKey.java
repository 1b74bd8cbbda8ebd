// The routing key that delays a message in a delay queue set (no dependencies).
public final class DelayRoutingKey {
    private DelayRoutingKey() {}

    /** The routing key of a binary set: of("orders", 5000, 4, 1000) is "orders.0.1.0.1". */
    public static String of(String key, long delayMs, int levels, long resolutionMs) {
        return of(key, delayMs, levels, resolutionMs, 2);
    }

    /** key, then the delay in ticks of resolutionMs, rounded up, as exactly levels digits in base radix
     *  (2, 4, 8, 16 or 256), each a decimal word: of("orders", 37000, 2, 1000, 16) is "orders.2.5". */
    public static String of(String key, long delayMs, int levels, long resolutionMs, int radix) {
        if (radix != 2 && radix != 4 && radix != 8 && radix != 16 && radix != 256) {
            throw new IllegalArgumentException("radix " + radix + " is not 2, 4, 8, 16 or 256");
        }
        long ticks = Math.floorDiv(delayMs + resolutionMs - 1, resolutionMs);
        String[] digits = new String[levels];
        for (int position = 0; position < levels; position++) { // the least significant digit last
            digits[levels - 1 - position] = Long.toString(ticks % radix);
            ticks /= radix;
        }
        if (delayMs < 0 || ticks != 0) {
            throw new IllegalArgumentException("delay " + delayMs + "ms does not fit " + levels + " levels of "
                + resolutionMs + "ms in radix " + radix);
        }
        String joined = String.join(".", digits);
        return key.isEmpty() ? joined : key + "." + joined;
    }
}
