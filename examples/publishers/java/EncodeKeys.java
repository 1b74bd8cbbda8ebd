// The encoder test's harness: java EncodeKeys KEY DELAY_MS LEVELS RESOLUTION_MS RADIX [KEY ...] prints one
// routing key per five arguments (an empty RADIX calls the four-argument of), or "refused: " and why.
public final class EncodeKeys {
    public static void main(String[] args) {
        for (int i = 0; i + 4 < args.length; i += 5) {
            String key = args[i];
            long delayMs = Long.parseLong(args[i + 1]);
            int levels = Integer.parseInt(args[i + 2]);
            long resolutionMs = Long.parseLong(args[i + 3]);
            Integer radix = args[i + 4].isEmpty() ? null : Integer.valueOf(args[i + 4]);
            try {
                System.out.println(radix == null
                    ? DelayRoutingKey.of(key, delayMs, levels, resolutionMs)
                    : DelayRoutingKey.of(key, delayMs, levels, resolutionMs, radix));
            } catch (IllegalArgumentException refusal) {
                System.out.println("refused: " + refusal.getMessage());
            }
        }
    }
}
