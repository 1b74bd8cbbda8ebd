// The routing key that delays a message in a delay queue set (no dependencies).
public final class DelayRoutingKey {
    private DelayRoutingKey() {}

    /** key, then the delay in ticks of resolutionMs, rounded up, as exactly levels binary digits:
     *  of("orders", 5000, 4, 1000) is "orders.0.1.0.1". */
    public static String of(String key, long delayMs, int levels, long resolutionMs) {
        long ticks = Math.floorDiv(delayMs + resolutionMs - 1, resolutionMs);
        if (delayMs < 0 || (levels < 63 && ticks >>> levels != 0)) {
            throw new IllegalArgumentException(
                "delay " + delayMs + "ms does not fit " + levels + " levels of " + resolutionMs + "ms");
        }
        StringBuilder b = new StringBuilder(key);
        for (int bit = levels - 1; bit >= 0; bit--) {
            if (b.length() > 0) b.append('.');
            b.append(ticks >>> bit & 1);
        }
        return b.toString();
    }

    // java DelayRoutingKey.java KEY DELAY_MS LEVELS RESOLUTION_MS [KEY DELAY_MS LEVELS RESOLUTION_MS ...]
    public static void main(String[] args) {
        for (int i = 0; i + 3 < args.length; i += 4) {
            System.out.println(of(args[i], Long.parseLong(args[i + 1]), Integer.parseInt(args[i + 2]), Long.parseLong(args[i + 3])));
        }
    }
}
