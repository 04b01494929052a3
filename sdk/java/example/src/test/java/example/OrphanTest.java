package example;

import dev.retsu.junit.Retsu;
import dev.retsu.junit.RetsuOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Run only by run.sh (-Dretsu.orphan.dir=DIR): starts a server whose --data-dir is DIR/data,
 * writes "JVM_PID RETSU_PID" to DIR/pids, then blocks until run.sh SIGKILLs this JVM.
 */
@EnabledIfSystemProperty(named = "retsu.orphan.dir", matches = ".+")
class OrphanTest {
    @Test
    void startsAServerAndBlocks() throws Exception {
        Path dir = Paths.get(System.getProperty("retsu.orphan.dir"));
        Retsu retsu = Retsu.start(RetsuOptions.builder().dataDir(dir.resolve("data")).build());
        try (SqsClient sqs = Sqs.client(retsu)) {
            sqs.createQueue(b -> b.queueName("orphan"));
        }
        Path tmp = dir.resolve("pids.tmp");
        Files.writeString(tmp, ProcessHandle.current().pid() + " " + retsu.pid() + "\n");
        Files.move(tmp, dir.resolve("pids"), StandardCopyOption.ATOMIC_MOVE);
        Thread.sleep(600_000);
    }
}
