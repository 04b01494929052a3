package example;

import dev.retsu.junit.Retsu;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Run only by startup.sh (-Dretsu.bench=N): N times, the time from Retsu.start() to the first
 * answered SQS request (ListQueues through the AWS SDK, client built after start), then stop.
 */
@EnabledIfSystemProperty(named = "retsu.bench", matches = "\\d+")
class StartupBench {
    @Test
    void startup() {
        int n = Integer.parseInt(System.getProperty("retsu.bench"));
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            try (Retsu retsu = Retsu.start()) {
                long t1 = System.nanoTime();
                try (SqsClient sqs = Sqs.client(retsu)) {
                    sqs.listQueues();
                }
                long t2 = System.nanoTime();
                ms.add((t2 - t0) / 1e6);
                if (i == 0) {
                    System.out.printf("first start in this JVM: Retsu.start() %.1f ms (binary extracted and checked), "
                            + "then SDK client + first request %.1f ms (SDK class loading)%n", (t1 - t0) / 1e6, (t2 - t1) / 1e6);
                }
            }
        }
        List<Double> sorted = new ArrayList<>(ms);
        Collections.sort(sorted);
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        System.out.printf("startup (Retsu.start() to first answered SQS request), %d starts: median %.1f ms, min %.1f ms, max %.1f ms%n",
                n, median, sorted.get(0), sorted.get(n - 1));
        System.out.println("all (ms, in order): " + ms.stream().map(d -> String.format("%.1f", d)).toList());
    }
}
