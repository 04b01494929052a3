package example;

import dev.retsu.junit.Retsu;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/** An SQS client for a Retsu server: what a user writes once. */
final class Sqs {
    private Sqs() {}

    static SqsClient client(Retsu retsu) {
        return SqsClient.builder()
                .endpointOverride(retsu.endpoint())
                .region(Region.of(retsu.region()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
    }
}
