// Publishes one message with a 10-second delay (com.rabbitmq:amqp-client).
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import java.nio.charset.StandardCharsets;

public final class Publish {
    static final int LEVELS = 12;             // the levels output of the quick start's set,
    static final long RESOLUTION_MS = 1000;   // its resolution
    static final int RADIX = 2;               // and its radix

    public static void main(String[] args) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri("amqp://guest:guest@127.0.0.1:5672/");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("retries.ingest", DelayRoutingKey.of("orders", 10_000, LEVELS, RESOLUTION_MS, RADIX),
                MessageProperties.PERSISTENT_BASIC, "order 42".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000); // throws if the broker refused the message
        }
    }
}
