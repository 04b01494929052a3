use super::*;
use crate::engine::SenderId;

#[test]
fn a_plain_message_fits_one_small_size_class() {
    // See `StoredMessage`: 128 bytes is one of mimalloc's size classes,
    // the next is 160.
    assert!(std::mem::size_of::<StoredMessage>() <= 128);
    assert!(message(None, 0).optional.is_none());
    assert!(message(Some("g"), 0).optional.is_some());
}

#[test]
fn a_message_keeps_its_latest_receive_across_states() {
    let mut m = message(None, 5);
    assert_eq!(
        (m.state(), m.received_ms(), m.first_receive_ms()),
        (State::Available, 0, None)
    );
    m.set_visible_since(5);
    m.receive(10, 40);
    assert_eq!(
        (m.state(), m.received_ms(), m.first_receive_ms()),
        (State::InFlight(40), 10, Some(10))
    );
    // The visibility ran out: available since 40, the receive remembered.
    m.set_state(State::Available);
    m.set_visible_since(40);
    assert_eq!((m.received_ms(), m.visible_since()), (10, 40));
    // A change of visibility puts it back in flight: the 12-hour cap still
    // counts from the receive.
    m.set_state(State::InFlight(90));
    assert_eq!((m.state(), m.received_ms()), (State::InFlight(90), 10));
    m.receive(50, 80);
    assert_eq!((m.received_ms(), m.first_receive_ms()), (50, Some(10)));
    m.forget_receives();
    assert_eq!(
        (m.state(), m.received_ms(), m.first_receive_ms()),
        (State::Available, 0, None)
    );
}

#[test]
fn the_enqueue_time_is_the_send_time_unless_set_apart() {
    let mut m = message(None, 7);
    assert_eq!(m.enqueued_ms(), 7);
    m.set_enqueued_ms(9);
    assert_eq!(m.enqueued_ms(), 9);
    assert!(m.optional.is_some());
    m.set_enqueued_ms(7);
    assert!(m.optional.is_none(), "nothing else was optional");
}

fn message(group: Option<&str>, now: u64) -> StoredMessage {
    let mut m = StoredMessage::new(
        Uuid::new_v4(),
        "b",
        [0; 16],
        Default::default(),
        SenderId::new("000000000000"),
        OptionalFields {
            group_id: group.map(Arc::from),
            ..OptionalFields::default()
        },
    );
    m.sent_ms = now;
    m
}

const DAY: u64 = 86_400_000;

#[test]
fn standard_lifecycle() {
    let mut s = MessageStore::new(false);
    let a = s.insert(message(None, 0), 0, 0, Transition::Sent);
    let b = s.insert(message(None, 0), 5_000, 0, Transition::Sent);
    assert_eq!((s.available_count(), s.delayed_count()), (1, 1));
    let r = s.receive(0, 10, 30_000, None);
    assert_eq!(r.slots, vec![a]);
    assert_eq!(s.in_flight_count(), 1);
    s.tick(5_000, DAY);
    assert_eq!(s.receive(5_000, 10, 30_000, None).slots, vec![b]);
    // a's visibility runs out at 30 s: it comes back with a higher count.
    s.tick(30_000, DAY);
    let r = s.receive(30_000, 10, 30_000, None);
    assert_eq!(r.slots, vec![a]);
    assert_eq!(s.get(a).unwrap().receive_count, 2);
    s.change_visibility(a, 31_000, 31_000);
    assert_eq!(s.available_count(), 1);
    s.remove(a, Transition::Deleted);
    s.remove(b, Transition::Deleted);
    assert!(s.is_empty());
}

#[test]
fn retention_expires_in_flight_messages_too() {
    let mut s = MessageStore::new(false);
    s.insert(message(None, 0), 0, 0, Transition::Sent);
    s.receive(0, 1, 3_600_000, None);
    s.tick(59_999, 60_000);
    assert_eq!(s.len(), 1);
    s.tick(60_000, 60_000);
    assert_eq!(s.len(), 0);
    assert_eq!(s.in_flight_count(), 0);
}

#[test]
fn fifo_group_lock_and_order() {
    let mut s = MessageStore::new(true);
    let a1 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
    let a2 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
    let b1 = s.insert(message(Some("b"), 0), 0, 0, Transition::Sent);
    // One receive of 1 takes a1 and locks group a.
    assert_eq!(s.receive(0, 1, 30_000, None).slots, vec![a1]);
    // Next receive must skip group a entirely.
    assert_eq!(s.receive(0, 10, 30_000, None).slots, vec![b1]);
    assert!(s.receive(0, 10, 30_000, None).slots.is_empty());
    s.remove(b1, Transition::Deleted);
    // a1 times out: it comes back first, with a2 after it.
    s.tick(30_000, DAY);
    assert_eq!(s.receive(30_000, 10, 30_000, None).slots, vec![a1, a2]);
    s.remove(a1, Transition::Deleted);
    assert!(
        s.receive(30_000, 10, 30_000, None).slots.is_empty(),
        "a2 still in flight"
    );
    s.remove(a2, Transition::Deleted);
    assert!(s.is_empty());
    assert!(s.fifo.as_ref().unwrap().groups.is_empty());
}

/// The FIFO group rule: an in-flight message blocks itself and the later
/// messages of its group, not the earlier ones visible again.
#[test]
fn fifo_in_flight_blocks_only_what_follows_it() {
    let mut s = MessageStore::new(true);
    let a = s.insert(message(Some("g"), 0), 0, 0, Transition::Sent);
    let b = s.insert(message(Some("g"), 0), 0, 0, Transition::Sent);
    let c = s.insert(message(Some("g"), 0), 0, 0, Transition::Sent);
    let receive = |s: &mut MessageStore| s.receive(0, 10, 30_000, None).slots;
    // A in flight, B visible: nothing of the group.
    assert_eq!(s.receive(0, 1, 30_000, None).slots, vec![a]);
    assert!(receive(&mut s).is_empty());
    s.change_visibility(a, 0, 0);
    assert_eq!(receive(&mut s), vec![a, b, c]);
    // A visible again, B in flight: A.
    s.change_visibility(a, 0, 0);
    assert_eq!(receive(&mut s), vec![a]);
    // A visible, B visible, C in flight: A, B.
    s.change_visibility(a, 0, 0);
    s.change_visibility(b, 0, 0);
    assert_eq!(receive(&mut s), vec![a, b]);
    // A visible, B in flight, C visible: A.
    s.change_visibility(a, 0, 0);
    s.change_visibility(c, 0, 0);
    assert_eq!(receive(&mut s), vec![a]);
    // A deleted: B is the head, in flight, and blocks C.
    s.remove(a, Transition::Deleted);
    assert!(receive(&mut s).is_empty());
    s.remove(b, Transition::Deleted);
    assert_eq!(receive(&mut s), vec![c]);
}

/// Groups are served by when their head last became visible; ties go
/// in delivery order, and fresh messages of the same instant first.
#[test]
fn fifo_groups_rank_by_head_visible_since() {
    let mut s = MessageStore::new(true);
    let g1 = s.insert(message(Some("g1"), 0), 0, 0, Transition::Sent);
    let g2 = s.insert(message(Some("g2"), 0), 0, 0, Transition::Sent);
    let g3 = s.insert(message(Some("g3"), 0), 0, 0, Transition::Sent);
    // g1 then g2 in flight for 1 s; g3 waits since 0.
    assert_eq!(s.receive(0, 2, 1_000, None).slots, vec![g1, g2]);
    s.tick(5_000, DAY);
    // Both back at 1 s, after g3; between them, delivery order.
    assert_eq!(s.receive(5_000, 10, 0, None).slots, vec![g3, g1, g2]);
    // Received with VisibilityTimeout 0: all back at 5 s, in that order.
    s.tick(5_000, DAY);
    assert_eq!(s.receive(5_000, 10, 30_000, None).slots, vec![g3, g1, g2]);
    // Released by hand: ranked by the moment of release.
    s.change_visibility(g2, 6_000, 6_000);
    s.change_visibility(g1, 7_000, 7_000);
    s.tick(8_000, DAY);
    let g4 = s.insert(message(Some("g4"), 5_500), 0, 5_500, Transition::Sent);
    assert_eq!(s.receive(8_000, 10, 30_000, None).slots, vec![g4, g2, g1]);
    // The in-flight index releases equal deadlines in delivery order.
    s.tick(38_000, DAY);
    assert_eq!(
        s.receive(38_000, 10, 30_000, None).slots,
        vec![g3, g4, g2, g1]
    );
}

#[test]
fn fifo_take_for_move_takes_visible_runs_in_serving_order() {
    let mut s = MessageStore::new(true);
    let a1 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
    let a2 = s.insert(message(Some("a"), 0), 0, 0, Transition::Sent);
    let b1 = s.insert(message(Some("b"), 0), 0, 0, Transition::Sent);
    let b2 = s.insert(message(Some("b"), 0), 0, 0, Transition::Sent);
    let b3 = s.insert(message(Some("b"), 0), 0, 0, Transition::Sent);
    assert_eq!(s.receive(0, 1, 30_000, None).slots, vec![a1]);
    s.receive(0, 10, 30_000, None);
    s.change_visibility(b1, 0, 0);
    s.change_visibility(b3, 0, 0);
    // a1 in flight blocks a2; b2 in flight blocks b3, b1 goes.
    assert_eq!(s.take_for_move(10).len(), 1);
    assert!(s.get(b1).is_none());
    assert!(s.get(a2).is_some() && s.get(b3).is_some());
    s.remove(b2, Transition::Deleted);
    s.remove(a1, Transition::Deleted);
    assert_eq!(s.take_for_move(10).len(), 2);
    assert!(s.is_empty());
}

#[test]
fn fifo_dead_letters_the_head_and_serves_the_rest() {
    let mut s = MessageStore::new(true);
    let a = s.insert(message(Some("g"), 0), 0, 0, Transition::Sent);
    let b = s.insert(message(Some("g"), 0), 0, 0, Transition::Sent);
    assert_eq!(s.receive(0, 1, 0, Some(1)).slots, vec![a]);
    s.tick(0, DAY);
    let r = s.receive(0, 10, 30_000, Some(1));
    assert_eq!(r.dead_lettered.len(), 1);
    assert_eq!(r.slots, vec![b]);
    assert!(s.get(a).is_none());
}

#[test]
fn redrive_takes_doomed_messages_out_and_keeps_looking() {
    let mut s = MessageStore::new(false);
    let a = s.insert(message(None, 0), 0, 0, Transition::Sent);
    let b = s.insert(message(None, 0), 0, 0, Transition::Sent);
    s.receive(0, 1, 0, Some(1));
    s.tick(0, DAY);
    let r = s.receive(0, 1, 30_000, Some(1));
    assert_eq!(r.dead_lettered.len(), 1);
    assert_eq!(r.slots, vec![b]);
    assert!(s.get(a).is_none());
}
