import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// The messenger's people search, friendships and privacy at the wire level (docs/messenger.md),
/// on every engine.
@Suite("Messenger: people and friends")
struct PeopleAndFriendsTests {
    typealias M = V1.Messenger

    @Test("search: prefix of first name, last name or tag, any case and accents, me excluded, in pages", arguments: TestEngine.once)
    func search_findsByNameAndTag(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let me = try await app.v1.person("searcher", first: "Sam", last: "Searcher")
            let jose = try await app.v1.person("jose", first: "José", last: "Álvarez")
            let yolka = try await app.v1.person("yolka", first: "Ёлка", last: "Иванова")
            _ = try await app.v1.person("other", first: "Olga", last: "Petrova")
            _ = try await app.v1.signedUp(email: "notag@example.com", tag: nil, firstName: "Jose", lastName: "Notag")

            // MUT
            func search(_ q: String) async throws -> [UUID] {
                let response = try await app.v1.get(M.people.path + "?q=" + q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, token: me.token)
                #expect(response.status == .ok, "\(response.text)")
                return try response.decoded(as: PeoplePage.self).items.map(\.id)
            }

            // validate
            #expect(try await search("jose") == [jose.id], "accent-insensitive first name; the tagless account is no person")
            #expect(try await search("ALV") == [jose.id], "last name prefix, any case")
            #expect(try await search("елка") == [yolka.id], "ё folds to е")
            #expect(try await search("@yol") == [yolka.id], "tag with a leading @")
            #expect(try await search("иванова ёл") == [yolka.id], "last name then first name")
            #expect(try await search("sear").isEmpty, "never myself")
            #expect(try await search("zzz").isEmpty)
            #expect(try await search("%").isEmpty, "LIKE wildcards are literal")
            #expect(try await search("jo\u{0}se") == [jose.id], "control characters (a NUL PostgreSQL would refuse) are left out")
            #expect(try await search("jo\u{1B}se") == [jose.id])
            #expect(try await app.v1.get(M.friends.path + "?q=%00%1B&sort=tag", token: me.token).status == .ok)

            var seen: [UUID] = []
            var cursor: String?
            repeat {
                let query = "?limit=1" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await app.v1.get(M.people.path + query, token: me.token).decoded(as: PeoplePage.self)
                #expect(page.items.count <= 1)
                seen += page.items.map(\.id)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen.count == 3 && Set(seen).count == 3 && !seen.contains(me.id), "every person once, in pages of one")
            try expectProblem(try await app.v1.get(M.people.path + "?cursor=garbage!", token: me.token), .badRequest, .invalidParameter)
            let withNUL = PageCursor.make(["a\u{0}", UUID().uuidString])   // well-formed, but with a NUL in it
            try expectProblem(try await app.v1.get(M.people.path + "?cursor=\(withNUL)", token: me.token), .badRequest, .invalidParameter)
        }
    }

    @Test("a person: the card and my relation; unknown ids, tagless accounts and myself are 404", arguments: TestEngine.once)
    func person_cardAndNotFound(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann", first: "Ann", last: "Lee")
            let bob = try await app.v1.person("bob")
            let notag = try await app.v1.signedUp(email: "nt@example.com", tag: nil)

            // MUT
            let card = try await app.v1.get(app.v1.path(M.person, bob.id), token: ann.token)

            // validate
            #expect(card.status == .ok)
            let person = try card.decoded(as: Person.self)
            #expect(person.tag == "bob" && person.relation == PersonRelation.none && person.chatId == nil && person.requestId == nil)
            #expect(Set(try card.jsonObject().keys) == ["id", "firstName", "lastName", "tag", "relation"], "absent members are left out")
            for id in [UUID(), notag.account.id, ann.id] {
                try expectProblem(try await app.v1.get(app.v1.path(M.person, id), token: ann.token), .notFound, .personNotFound)
            }
            try expectProblem(try await app.v1.get(V1.filling(M.person.path, ["id": "not-a-uuid"]), token: ann.token), .notFound, .personNotFound)
            try expectProblem(try await app.v1.get(app.v1.path(M.person, bob.id)), .unauthorized, .unauthorized)
            // A tagless account is told to choose a tag before using the messenger.
            try expectProblem(try await app.v1.get(M.people.path, token: notag.token), .conflict, .tagRequired)
        }
    }

    @Test("friend requests: send, see in both sections, accept; decline and cancel; remove; each side hears of it", arguments: TestEngine.once)
    func requests_lifecycle(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann", first: "Ann", last: "Bell")
            let bob = try await app.v1.person("bob", first: "Bob", last: "Adams")
            let cat = try await app.v1.person("cat", first: "Cat", last: "Crow")

            // MUT: Ann asks Bob (twice: the same request), Ann asks Cat.
            let asked = try await app.v1.post(M.requestFriend.path, PersonReference(personId: bob.id), token: ann.token).decoded(as: Person.self)
            let again = try await app.v1.post(M.requestFriend.path, PersonReference(personId: bob.id), token: ann.token).decoded(as: Person.self)
            _ = try await app.v1.post(M.requestFriend.path, PersonReference(personId: cat.id), token: ann.token)

            // validate
            #expect(asked.relation == .outgoing && asked.requestId != nil)
            #expect(again.requestId == asked.requestId, "asking again changes nothing")
            let annView = try await app.v1.friends(of: ann)
            #expect(annView.outgoing.map(\.id) == [cat.id, bob.id] && annView.friends.isEmpty && annView.incoming.isEmpty, "newest first")
            let bobView = try await app.v1.friends(of: bob)
            #expect(bobView.incoming.map(\.id) == [ann.id] && bobView.incoming.first?.requestId == asked.requestId)
            let requestID = try #require(asked.requestId)

            // Only Bob may accept, only Ann may cancel: anyone else's id is 404.
            try expectProblem(try await app.v1.post(app.v1.path(M.acceptRequest, requestID), json: "", token: ann.token), .notFound, .requestNotFound)
            try expectProblem(try await app.v1.post(app.v1.path(M.acceptRequest, requestID), json: "", token: cat.token), .notFound, .requestNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.cancelRequest, requestID), token: bob.token), .notFound, .requestNotFound)

            let accepted = try await app.v1.post(app.v1.path(M.acceptRequest, requestID), json: "", token: bob.token)
            #expect(accepted.status == .ok)
            #expect(try accepted.decoded(as: Person.self).relation == .friend)
            #expect(try await app.v1.friends(of: ann).friends.map(\.id) == [bob.id])
            try expectProblem(try await app.v1.post(app.v1.path(M.acceptRequest, requestID), json: "", token: bob.token), .notFound, .requestNotFound)

            // Cat declines Ann's request; Ann's own cancel afterwards finds nothing.
            let catRequest = try #require(try await app.v1.friends(of: cat).incoming.first?.requestId)
            #expect(try await app.v1.post(app.v1.path(M.declineRequest, catRequest), json: "", token: cat.token).status == .noContent)
            try expectProblem(try await app.v1.delete(app.v1.path(M.cancelRequest, catRequest), token: ann.token), .notFound, .requestNotFound)
            #expect(try await app.v1.friends(of: ann).outgoing.isEmpty)

            // Bob removes Ann; removing again is 404.
            #expect(try await app.v1.delete(app.v1.path(M.removeFriend, ann.id, name: "personId"), token: bob.token).status == .noContent)
            #expect(try await app.v1.friends(of: ann).friends.isEmpty)
            try expectProblem(try await app.v1.delete(app.v1.path(M.removeFriend, ann.id, name: "personId"), token: bob.token), .notFound, .notFriends)

            // Every step reached both sides' event logs, numbered without gaps.
            let kinds = try await app.services.realtime.log.events(of: ann.id, after: 0, limit: 100)
            #expect(kinds.map(\.seq) == Array(1...Int64(kinds.count)))
            #expect(kinds.map(\.kind) == ["friend.requested", "friend.requested", "friend.accepted", "friend.removed", "friend.removed"])
            let bobs = try await app.services.realtime.log.events(of: bob.id, after: 0, limit: 100).map(\.kind)
            #expect(bobs == ["friend.requested", "friend.accepted", "friend.removed"])
        }
    }

    @Test("asking someone who asked me makes us friends, also when both ask at the same moment", .tags(.engine), arguments: TestEngine.all)
    func mutualRequests_makeFriends(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let v1 = app.v1

            // MUT
            async let first = v1.post(M.requestFriend.path, PersonReference(personId: bob.id), token: ann.token)
            async let second = v1.post(M.requestFriend.path, PersonReference(personId: ann.id), token: bob.token)
            let answers = try await [first, second]

            // validate
            #expect(answers.allSatisfy { $0.status == .ok }, "\(answers.map(\.text))")
            #expect(try await app.v1.friends(of: ann).friends.map(\.id) == [bob.id])
            #expect(try await app.v1.friends(of: bob).friends.map(\.id) == [ann.id])
            #expect(try await app.v1.friends(of: bob).incoming.isEmpty)
        }
    }

    @Test("friends sort by name or tag and filter by the search", arguments: TestEngine.once)
    func friends_sortAndFilter(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let me = try await app.v1.person("myself")
            let zed = try await app.v1.person("aaa", first: "Zed", last: "Young")
            let amy = try await app.v1.person("zzz", first: "Amy", last: "Brown")
            try await app.v1.befriend(me, zed)
            try await app.v1.befriend(me, amy)

            // MUT + validate
            #expect(try await app.v1.friends(of: me).friends.map(\.id) == [amy.id, zed.id], "by last name: Brown, Young")
            #expect(try await app.v1.friends(of: me, query: "?sort=tag").friends.map(\.id) == [zed.id, amy.id], "by tag: aaa, zzz")
            #expect(try await app.v1.friends(of: me, query: "?q=you").friends.map(\.id) == [zed.id])
            try expectProblem(try await app.v1.get(M.friends.path + "?sort=age", token: me.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(M.requestFriend.path, PersonReference(personId: me.id), token: me.token), .badRequest, .notYourself)
            try expectProblem(try await app.v1.post(M.requestFriend.path, PersonReference(personId: UUID()), token: me.token), .notFound, .personNotFound)
        }
    }

    @Test("friend requests per day are limited, with Retry-After", arguments: TestEngine.once)
    func friendRequests_areLimited(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.friendRequestsPerDay = 2 }) { app in
            // setup
            let me = try await app.v1.person("myself")
            var others: [Someone] = []
            for tag in ["pal1", "pal2", "pal3"] { others.append(try await app.v1.person(tag)) }

            // MUT
            for other in others.prefix(2) {
                #expect(try await app.v1.post(M.requestFriend.path, PersonReference(personId: other.id), token: me.token).status == .ok)
            }
            let third = try await app.v1.post(M.requestFriend.path, PersonReference(personId: others[2].id), token: me.token)

            // validate
            try expectProblem(third, .tooManyRequests, .rateLimited)
            #expect(third.headers[.retryAfter] != nil)
        }
    }

    @Test("privacy: friends only keeps strangers from opening a chat or writing; friends still can", arguments: TestEngine.once)
    func privacy_friendsOnly(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let cat = try await app.v1.person("cat")
            let before = try await app.v1.openChat(cat, with: ann)   // a chat from before the setting

            // MUT
            #expect(try await app.v1.get(M.privacy.path, token: ann.token).decoded(as: PrivacySettings.self).whoCanMessageMe == .everyone)
            let changed = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"friends"}"#, token: ann.token)

            // validate
            #expect(try changed.decoded(as: PrivacySettings.self).whoCanMessageMe == .friends)
            try expectProblem(try await app.v1.post(M.openChat.path, PersonReference(personId: ann.id), token: bob.token), .forbidden, .messagingNotAllowed)
            let late = try await app.v1.post(app.v1.path(M.send, before.id), SendMessage(text: "hi", clientMessageId: "c1"), token: cat.token)
            try expectProblem(late, .forbidden, .messagingNotAllowed)
            try await app.v1.befriend(bob, ann)
            let chat = try await app.v1.openChat(bob, with: ann)
            try await app.v1.send("hello, friend", in: chat.id, by: bob)
            try expectProblem(try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"nobody"}"#, token: ann.token), .badRequest, .malformedBody)
        }
    }

    @Test("request/cancel cycles to one person are budgeted per day: the fourth new request is 429, and the target heard of three", arguments: TestEngine.once)
    func requests_cancelCycles_areBudgetedPerPerson(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann"), bob = try await app.v1.person("bob"), cat = try await app.v1.person("cat")
            let before = try await app.services.realtime.log.bounds(of: bob.id).last

            // MUT: Ann asks Bob and cancels, four times; then asks Cat
            var statuses: [Int] = []
            for _ in 0..<4 {
                let asked = try await app.v1.post(M.requestFriend.path, PersonReference(personId: bob.id), token: ann.token)
                statuses.append(asked.status.code)
                if let id = try? asked.decoded(as: Person.self).requestId {
                    #expect(try await app.v1.delete(app.v1.path(M.cancelRequest, id), token: ann.token).status == .noContent)
                }
            }
            let other = try await app.v1.post(M.requestFriend.path, PersonReference(personId: cat.id), token: ann.token)

            // validate
            #expect(statuses == [200, 200, 200, 429], "\(statuses)")
            #expect(other.status == .ok, "another person is another budget")
            #expect(try await app.services.realtime.log.bounds(of: bob.id).last - before == 6, "three requests and three cancels")
        }
    }
}
