// Publishes one persistent message with a delay to a delay queue set (Debian's librabbitmq-client-java).
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public final class Publish {
    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        String routingKey = DelayRoutingKey.of(env.get("DELAY_KEY"), Long.parseLong(env.get("DELAY_MS")),
            Integer.parseInt(env.get("DELAY_LEVELS")), Long.parseLong(env.get("DELAY_RESOLUTION_MS")),
            Integer.parseInt(env.get("DELAY_RADIX")));
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(env.get("RABBITMQ_AMQP_URL"));
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish(env.get("DELAY_EXCHANGE"), routingKey, MessageProperties.PERSISTENT_BASIC,
                env.get("DELAY_BODY").getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000); // throws if the broker refused the message
        }
    }
}
