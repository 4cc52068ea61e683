// safety-contact: whether a text asks to move the conversation elsewhere or to reach someone
// privately, by any channel, or carries contact details. Judged after foldText and numberWords
// (./safety-text.ts), so "five five five, one two three…" is a phone number and "ＤＭ ｍｅ" is "dm me".
//
// A contact request is any of:
// - contact details: an e-mail address (also "name at example dot com", "name[at]…", spaced "@"),
//   with a domain on the public suffix list; a phone number (international or grouped formats, or
//   seven or more digits when the sentence talks about calling, texting or a number); a handle
//   ("@name", "name#1234");
// - a contact verb aimed at the speaker: "message/DM/text/call/email/add/friend/ping/snap me",
//   "hit me up", "HMU", "find/look me up", "come find me", "catch me on…", "reach me", "meet me",
//   "send a friend request", "follow me on…", "give me a
//   call/ring", "drop/shoot/send me a line/text/message/DM/friend request";
// - the learner's details asked for: "what's your / give me / send me / share your / tell me your"
//   + number, e-mail, address, username, handle, @, a channel, real name, school; "do you have /
//   are you on" + a channel; "where do you live"; a photo "of yourself", a selfie;
// - the speaker's own channel: "my" + a channel, number, e-mail, handle, username, gamertag, ID,
//   profile, account, server, DMs; "I'm on <channel>";
// - a channel named (Instagram, Snapchat, TikTok, Discord, WhatsApp, Telegram, Signal, Facebook,
//   Messenger, X/Twitter, WeChat, Kik, LINE, Viber, Skype, Zoom, FaceTime, Roblox, Minecraft, Xbox…)
//   in a sentence where the speaker proposes to talk, meet, add, join, play or switch ("let's",
//   "we can", "I'll", "you can … me");
// - secrecy or privacy: "don't tell your teacher", "between us", "our secret", "privately",
//   "private chat", "where your teacher can't see", "off this app", "offline", "one-on-one outside";
// - continuing elsewhere, whatever the words (issue 49): in one sentence, the speaker (me, us, I,
//   we, let's, my), a verb of carrying on or getting in touch (continue, keep going, pick this up,
//   talk, help, tutor, open, switch, come…) and a place or manner that is not this conversation:
//   private, one-to-one, on the side, in person, by phone or video, on a call, a separate, direct,
//   side or private chat or session, my chat/page/profile, somewhere else or quieter, taken
//   offline, outside the lesson or the app, without the class seeing, instead of the class page,
//   straight to me, "I'm on Teams / around tonight". The place is what the policy forbids, so no list of verbs or channels must be complete:
//   "carry on with you one-to-one later tonight" and "switch to a direct chat" are the same class.
// Not a contact request (decided for issue 49, measured on the benign corpus): talking with the
// teacher, a classmate or the group, in class or on the class's own teacher-run channel ("ask your
// teacher", "talk to your classmate", "message your group in the class chat the teacher set up",
// "post it on the class page"), a school adult seeing the learner privately or one-to-one ("your
// teacher can go over this with you privately": the policy is about the assistant and strangers,
// not the teacher); asking here, in the teacher-visible conversation ("tell me what you notice",
// "ask me another question", "reply here"); one-to-one as a counting strategy; private things in
// a story ("why does he keep it private?"); channel
// names in media-literacy or online-safety prose; the school senses of call ("we call this x"),
// text (a text), message (the author's message), add, follow, reach, signal, line, snap, steam,
// address (the Gettysburg Address), contact (contact forces).
import { parse } from 'tldts';
import { foldText, numberWords } from './safety-text.ts';

export type ContactFinding = 'email' | 'phone' | 'handle' | 'contact-verb' | 'details-asked' | 'own-channel' | 'channel-proposal' | 'privacy' | 'continue-elsewhere';

// Channels that are never ordinary words (case-insensitive), and those that are words too (the
// original spelling must be capitalized: "Signal", "LINE", "Zoom", "X").
const CHANNELS = String.raw`insta(?:gram)?|ig|snap ?chat|snap|tik ?tok|discord|whats ?app|telegram|facebook|fb|fb messenger|messenger|twitter|wechat|weixin|kik|viber|skype|facetime|imessage|google meet|hangouts|slack|reddit|twitch|roblox|minecraft|fortnite|xbox(?: live)?|psn|playstation|linkedin|tumblr|pinterest|qq|kakao(?:talk)?|omegle|youtube|bluesky|mastodon|gmail|hotmail|outlook|yahoo|icloud`;
const WORD_CHANNELS = String.raw`Signal|SIGNAL|Line|LINE|Zoom|ZOOM|Teams|TEAMS|X|Threads|Steam|Snap|Messenger|Telegram|Text|SMS`;

const CONTACT_VERB_ME = new RegExp(
  String.raw`\b(?:message|msg|messages|dm|dms|pm|inbox|text|txt|texts|call|ring|phone|email|e-mail|mail|ping|contact|add|friend|snap|snapchat|whatsapp|telegram|skype|facetime|zoom|tweet|tag|mention|reach|reach out to|get in touch with|stay in touch with|keep in touch with|connect with|write to|write|look|hit|meet|visit|invite)\s+(?:me|us)\b(?!\s+(?:what|how|why|which|know|see|show)\b)`,
);
const CONTACT_ME_PHRASES =
  /\b(?:hit (?:me|us) up|catch (?:me|us) (?:on|at|in|after|later|online|tonight)\b|(?:come|go) (?:and )?(?:find|see|visit) (?:me|us)\b|find (?:me|us) (?:later|after|tonight|tomorrow|any ?time)\b|(?:swing|drop|stop|pop) by (?:my|our)\b|hmu|look (?:me|us) up|find (?:me|us) (?:on|at|in)|follow (?:me|us) (?:on|at|back|@)|follow (?:me|us)$|join (?:me|us) (?:on|in) (?:a |the |my )?(?:call|chat|server|channel|group)|(?:give|drop|shoot|send|leave) (?:me|us) (?:a|an|your) (?:call|ring|line|text|txt|message|msg|dm|pm|email|e-mail|note|snap|shout|buzz|private message|friend request)|send (?:me|us) (?:a |some )?(?:picture|photo|selfie|video)s? of (?:you|yourself)\b|send (?:me|us) (?:a )?selfie|(?:accept|answer) my (?:friend )?request|slide into my dms?|check your (?:dms?|inbox|messages)|i (?:sent|messaged|texted|emailed|dmed) you|did you (?:get|see) my (?:text|message|dm|snap|email)|feel free to (?:dm|message|text|email|call|contact|reach)|(?:let's|let us|we can|we could|we should|i can|i could|i'll|i will) (?:keep in touch|stay in touch|connect (?:with|on|via))\b|(?:let's|let us|we can|we could|can we|shall we|should we|i can|i could|want to) (?:video[- ]?chat|video[- ]?call|voice[- ]?chat|voice[- ]?call|facetime|skype|zoom call|call (?:later|tonight|each other|you)|text each other|dm|message each other|snap|discord|whatsapp|telegram)\b|\b(?:take|move|continue|bring|switch) (?:this|it|our|the) (?:chat|conversation|talk|discussion)? ?(?:to|on|over to|into|in) (?!the next|step|part)|\b(?:to|in|into|on) (?:the |my |your |our )?dms\b|\b(?:i'll|i will|i can|i could|i'd|let me|i'm going to|i am going to|i want to|i'd like to) (?:\w+ )?(?:dm|pm|message|text|txt|email|e-mail|mail|call|ring|phone|snap|add|follow|friend|ping|whatsapp|facetime|skype|contact|meet|visit|video ?call) you\b|\b(?:a |on a )?(?:call|video call|voice call|voice chat|video chat|facetime) with (?:me|us)\b|\b(?:stay|keep|get) in touch (?:on|via|through|over|by|at)\b)/;

const YOUR_DETAILS = new RegExp(
  String.raw`\b(?:what(?:'s| is| are)?|whats|wat's|give me|send me|send|share|drop|type|tell me|let me know|post|leave|write down|dm me|text me|can i (?:have|get)|i need)\s+(?:me\s+)?(?:your|ur|yr)\s+(?:(?:real|full|last|home|phone|cell|mobile|email|e-mail|contact|user|own)\s+)?(?:phone|cell|mobile|number|digits|email|e-mail|address|username|user name|user|handle|@|gamertag|tag|id|contact|details|location|name and school|real name|school|${CHANNELS})\b|\b(?:do you (?:have|use)|are you on|have you got|you on)\s+(?:a |an )?(?:${CHANNELS}|phone|cell|mobile|email|an email)\b|\bwhere (?:do |did )?you (?:live|stay|sleep)\b|\bwhat school do you (?:go to|attend)\b|\bwhere(?:'s| is| are) your (?:school|house|home|flat|apartment|class)\b|\bwhich school\b|\b(?:what(?:'s| is)?|whats|give me|send me|tell me|share|drop)\s+your\s+(?:\w+\s+){0,2}(?:on|in|for)\s+(?:${CHANNELS})\b|\btell me your (?:address|real name|school|age and school)\b|\b(?:give me|send me|drop|share|post|type|leave) (?:me )?your @`,
);

/** A friend request proposed (guarded like the details asked: "never send a friend request to strangers" is advice). */
const FRIEND_REQUEST = /\b(?:send|accept|add)\b[^.!?]{0,15}\bfriend requests?\b/;
const PHOTO_OF_YOU = /\b(?:send|show|see|share|post|have|get|take)\b[^.!?]{0,20}\b(?:picture|photo|selfie|video)s? of (?:you|yourself)\b/;

const MY_CHANNEL = new RegExp(
  String.raw`\bmy\s+(?:(?:${CHANNELS})(?:\s+(?:is|name|handle|id|username|tag|number|account|page|channel|profile|group|server))?|(?:phone|cell|mobile|whatsapp|home) ?(?:number|#)|number(?: is|:)|cell|mobile|email|e-mail|handle|username|user name|gamertag|tag|(?:wechat|line|kik|discord|skype|steam|xbox) ?(?:id|name|tag)|id is|profile|account|page|channel|server|group ?chat|dms?|inbox|bio|socials?|invite|invitation|(?:contact )?details|contact|(?:own|personal|private) (?:chat|page|account|number|line|site))\b|\b(?:i'm|i am|im)\s+(?:always\s+)?on\s+(?:${CHANNELS})\b|\blink in (?:my )?bio\b`,
);

// A communication verb, then within a few words a channel after a preposition ("chat on insta",
// "talk more on WhatsApp", "move this to Telegram"); the words that are also ordinary words
// ("Signal", "Zoom", "LINE", "X") count only as spelled with capitals.
const COMM = String.raw`(?:talk|talking|chat|chatting|message|dm|pm|text|call|ring|add|follow|find|join|meet|contact|reach|hop|switch|move|continue|friend|subscribe|tag|mention|ping|voice|video|facetime|play|hang out|connect|send|write|keep in touch|stay in touch|catch up|see you|speak|help you|explain)`;
const CHANNEL_AFTER = new RegExp(String.raw`\b${COMM}\b[^.!?]{0,40}?\b(?:on|via|over|through|to|in|using|into|at)\s+(?:a |the |my |your |our )?(?:${CHANNELS}|dms?|pms?|private messages?)\b`);
const WORD_CHANNEL_AFTER = new RegExp(String.raw`\b${COMM}\b[^.!?]{0,40}?\b(?:on|via|over|through|to|in|using|into|at)\s+(?:a |the |my |your |our )?(?:${WORD_CHANNELS})\b`, 'i');
const WORD_CHANNEL_CASED = new RegExp(String.raw`\b(?:on|via|over|through|to|in|using|into|at)\s+(?:a |the |my |your |our )?(?:${WORD_CHANNELS})\b`);
const USE_CHANNEL = new RegExp(String.raw`\b(?:let's|lets|let us|we can|we could|we should|can we|shall we|should we|want to|i'll|i will)\s+(?:play|use|hop on|get on|jump on|go on|meet on|talk on|chat on)\s+(?:${CHANNELS})\b`);
const SPEAKER_OR_LEARNER = /\b(?:me|my|i|i'm|i'll|we|us|let's|lets|our|you|your)\b|\?|\bwant to\b/;

const PRIVACY = new RegExp(
  [
    String.raw`\b(?:don't|dont|do not|never|no need to) tell (?:your |the )?(?:teacher|teachers|parents?|mum|mom|dad|family|anyone|anybody|any ?one)\b`,
    String.raw`\b(?:just |only )?between (?:you and me|us|the two of us)\b`,
    String.raw`\b(?:our|a little) secret\b`,
    String.raw`\bkeep (?:this|it) (?:a )?secret\b`,
    String.raw`\b(?:a|our|in|open|start|use|have) (?:a )?private (?:\w+ )?(?:chat|conversation|message|call|room|dm|pm)\b`,
    String.raw`\bsecret from (?:your |the )?(?:teacher|teachers|parents?|mum|mom|dad|family|everyone)\b`,
    String.raw`\bprivate (?:message|msg|dm|pm) me\b`,
    String.raw`\bsomewhere (?:more )?(?:private|else|quiet)\b`,
    String.raw`(?:\b|some)(?:where|so) (?:your |the )?(?:teacher|teachers|parents?|nobody|no one|they|no adults?) (?:can't|cannot|can not|won't|will not|doesn't|does not|don't|do not) (?:see|read|have to read|know)\b`,
    String.raw`\b(?:off|outside|away from|out of) (?:this|the) (?:app|chat|platform|site|website|class chat|conversation)\b`,
    String.raw`\b(?:continue|talk|chat|keep talking|move this|take this) (?:\w+ )?offline\b`,
    String.raw`\boff the record\b`,
    String.raw`\bwithout your (?:teacher|teachers|parents?|mum|mom|dad|family)\b`,
    String.raw`\b(?:delete|clear|erase) (?:this|our) (?:chat|conversation|messages)\b`,
    String.raw`\bjust the two of us\b`,
    String.raw`\bone[- ]on[- ]one (?:outside|after|away|off)\b`,
    String.raw`\bafter your teacher (?:logs off|leaves|goes)\b`,
    String.raw`\bcome (?:over )?to my (?:house|home|place|flat|apartment)\b`,
    String.raw`\bmeet (?:me|up)\b`,
    String.raw`\b(?:we can|we could|let's|let us|shall we|should we|can we) meet (?:up|in person|at|somewhere|after|outside|tonight|tomorrow|later|alone|on (?:\w+day|the weekend))\b`,
    String.raw`\bjust (?:you and me|me and you|us two)\b`,
    String.raw`\b(?:don't|dont|do not|never) let (?:your |the )?(?:teacher|teachers|parents?|mum|mom|dad|family|anyone|anybody) (?:see|know|read|find out|hear)\b`,
    // Said to the learner, not of a character ("why does he keep it private?").
    String.raw`(?<!\b(?:he|she|they|it|who|character|narrator)\s)\bkeep (?:this|it|our|these|them)(?: \w+)? (?:private|secret|hidden|quiet|between us)\b`,
    String.raw`\b(?:talk|chat|meet|message|text|call|see)\b[^.!?]{0,30}\boutside (?:of )?(?:school|class|lessons?|this chat|here)\b`,
  ].join('|'),
);

// Continuing elsewhere: the speaker (me, us, I, we, let's, my) offering to go on with the learner
// anywhere but this teacher-visible conversation, by any words: a manner or place that is private,
// one-to-one, off the platform or out of the teacher's sight ("one-to-one later tonight", "a
// private session with me", "somewhere we can talk more freely", "talk to me on the side", "over
// video", "without the class seeing", "come straight to me instead"). Judged per sentence, with a
// verb of carrying on or getting in touch, so "match them one-to-one" (a counting strategy) is not.
const ELSEWHERE = String.raw`(?:(?<!(?:match|pair|correspond|map|count)\w*[^.!?]{0,30})one[- ](?:to|on)[- ]one(?![- ]?(?:correspondence|match))|\b1[- ]?(?::|on|to)[- ]?1\b|privately|in private|(?:me|us|you|it|this|the rest) in person|in person with (?:me|us)|face[- ]to[- ]face|(?:me|us) on the side|on the side with (?:me|us)|with (?:me|us|you) alone|(?:me|us) alone|alone with (?:me|us|you)|just (?:the two of us|you and me|me and you|us two|us)\b|(?:to|with|contact|reach|message|ask|write to|find) (?:me|us) directly|(?:you|with you) personally|outside (?:of )?(?:the |this |our )?(?:lesson|lessons|chat|app|platform|site|conversation|class hours|school hours)|somewhere (?:else|quieter|private|more private|we can|outside)|elsewhere|(?:take|taking|move|moving) (?:it|this|that|things|the conversation|our conversation) off-?line|off-?line with (?:me|us)|another (?:chat|app|platform|site|room)|my(?: own| little| private| personal| secret)* (?:chat|chat room|room|session|sessions|conversation|thread|channel|inbox|page|profile|account|space)|our(?: own| little| private| personal| secret)+ (?:chat|chat room|room|session|sessions|conversation|thread|channel|inbox|page|space)|(?:a|an|our|my) (?:(?:own|little|separate|direct|side|personal|private|secret) )+(?:chat|chat room|room|session|sessions|conversation|thread|channel|messages?|inbox|line|lessons?|tutoring)|(?:a|my|our) (?:private|personal|secret) (?:note|page|account|profile)|private (?:tutoring|lessons?|sessions?|help)|(?:by|over) (?:the )?(?:phone|video|voice|e-?mail)|on the phone|(?:via|by|over|on) (?:a )?(?:quick |short )?(?:video |voice |phone )?call(?! (?:in|from|to|at|between|with (?:his|her|their|the))\b)|(?:video|voice|phone) (?:call|chat)|without (?:the class|anyone|anybody|others|the others|your (?:teacher|classmates|class|group)|the teacher|everyone)(?: else)? (?:seeing|knowing|watching|reading|noticing|finding out)|(?:talk|chat|speak|ask|write to me) more freely|away from (?:the |your )?(?:class|teacher|group|others|class chat|chat)|instead of (?:the class|your teacher|the teacher|the class chat|the class page)|(?:skip|bypass|go around) (?:the class|your teacher|the teacher)|(?:straight|right|directly) to (?:me|us)|not in front of (?:everyone|the class|others)|where (?:no one|nobody|others|the class|your teacher) (?:can|will)(?:'t| not)? see|(?:i'm|i am|i'll be|i will be)\s+(?:\w+\s+)?(?:around|online|free|available)\s+(?:\w+\s+){0,2}?(?:tonight|after (?:school|class)|in the evenings?|at night|on (?:the )?weekends?|later))`;
const CARRY_ON = String.raw`(?:continue|continuing|carry on|carrying on|keep (?:going|working|helping|talking|chatting|this going|it going|practi[cs]ing)|keep this|pick (?:this|it) (?:up|back up)|catch up|talk|talking|chat|chatting|help|helping|tutor|tutoring|explain|go (?:through|over)|walk (?:you )?through|work (?:on|through)|working|meet|find|reach|write|message|ask|send|start|open|switch|move|take|come|swing by|drop by|stop by|around|available|online|free|session|sessions|lessons?|study|answer|hear from)`;
const SPEAKER = String.raw`(?:\b(?:me|us|i|i'm|i'll|i'd|we|we'll|we're|let's|lets|my|our)\b)`;
const CONTINUE_ELSEWHERE = [new RegExp(SPEAKER), new RegExp(String.raw`\b${CARRY_ON}\b`), new RegExp(String.raw`\b${ELSEWHERE}`)];
/** The speaker available on a channel: "I'm always around on WhatsApp", "I'm on Teams most evenings" (the word channels as capitalized). */
const SPEAKER_AVAILABLE = String.raw`\b(?:i'm|i am|i'll be|i will be|i can be|I'm|I am|I'll be|I will be|I can be)\s+(?:\w+\s+){0,2}?(?:on|at|around on|available on|online on|reachable on)\s+`;
const SPEAKER_ON_CHANNEL = new RegExp(String.raw`${SPEAKER_AVAILABLE}(?:${CHANNELS})\b`);
const SPEAKER_ON_WORD_CHANNEL = new RegExp(String.raw`${SPEAKER_AVAILABLE}(?:${WORD_CHANNELS})\b`);
/** A school adult as the other party: "your teacher can go over this with you privately" is not the speaker going elsewhere. */
const SCHOOL_ADULT = /\b(?:your|the|a|a trusted|another)(?: school| class| form| homeroom)? (?:teacher|teachers|counsell?or|school nurse|nurse|teaching assistant|librarian|principal|head teacher|headteacher|trusted adult|adult you trust|parent|parents|carer|guardian|tutor at school)\b/;

const EMAIL = /[\p{L}\p{N}._%+-]+@([\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)/u;
const HANDLE = /(?:^|[\s(:,"'])@[\p{L}\p{N}_.]{2,}|\b[\p{L}\p{N}_.]{2,}#\d{4}\b/u;
const PHONE_STRICT = /(?<![\p{N}.,/])(?:\+\s?\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,5}){2,4}|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4}|1[\s.-]\d{3}[\s.-]\d{3}[\s.-]\d{4}|0\d{1,4}[\s.-]\d{3,4}[\s.-]?\d{3,4}|\d{3}-\d{4})(?![\p{N}]|[.,/]\p{N})/u;
const PHONE_LOOSE = /(?<![\p{N}.,/])\d(?:(?:\s?[.-]\s?|\s)?\d){6,14}(?![\p{N}]|[.,/]\p{N})/u;
const PHONE_CUE = /\b(?:call|calls|text|txt|phone|number|numbers|cell|mobile|tel|ring|dial|whatsapp|sms|reach|contact|my|me)\b/;

/** Texting spellings as words: "ur snap", "where do u live", "lmk", "wanna", "convo", "pic". */
function untext(s: string): string {
  return s
    .replace(/\bu\b/g, 'you')
    .replace(/\b(?:ur|yr)\b/g, 'your')
    .replace(/\br\b/g, 'are')
    .replace(/\blmk\b/g, 'let me know')
    .replace(/\b(?:wanna|want ?2)\b/g, 'want to')
    .replace(/\bgimme\b/g, 'give me')
    .replace(/\bconvo\b/g, 'conversation')
    .replace(/\bpics?\b/g, 'picture')
    .replace(/\bmsg\b/g, 'message')
    .replace(/\btxt\b/g, 'text')
    .replace(/\bim\b/g, "i'm")
    .replace(/\b(?:pls|plz)\b/g, 'please');
}

/** E-mail obfuscations undone: "name at example dot com", "name [at] example [dot] com", "name @ example . com". */
function unobfuscateEmail(s: string): string {
  return s
    .replace(/\s?[[({<]\s?(?:at|@)\s?[\])}>]\s?/g, '@')
    .replace(/\s?[[({<]\s?(?:dot|\.)\s?[\])}>]\s?/g, '.')
    .replace(/ underscore /g, '_')
    .replace(/([\p{L}\p{N}._%+-]) ?(?:@| at ) ?([\p{L}\p{N}-]+(?: ?(?:\.| dot ) ?[\p{L}\p{N}-]+)+)/gu, (_m, a: string, domain: string) => `${a}@${domain.replace(/ ?(?:\.| dot ) ?/g, '.')}`);
}

function hasEmail(s: string): boolean {
  // Judged as written and with obfuscations undone: "family at jonah@example.org" is still an address.
  for (const text of [s, unobfuscateEmail(s)]) {
    for (const m of text.matchAll(new RegExp(EMAIL.source, 'gu'))) {
      const parsed = parse(m[1]!, { allowPrivateDomains: true });
      if (parsed.domain && (parsed.isIcann || parsed.isPrivate)) return true;
    }
  }
  return false;
}

/** Contact details in a text: an e-mail address or a phone number (also used for learner records). */
export function findContactDetails(text: string): 'email' | 'phone' | null {
  const folded = foldText(text);
  if (hasEmail(folded)) return 'email';
  const withDigits = numberWords(folded);
  const sentences = withDigits.split(/(?<=[.!?])\s+|\n+/);
  for (const sentence of sentences) {
    if (PHONE_STRICT.test(sentence)) return 'phone';
    if (PHONE_LOOSE.test(sentence) && PHONE_CUE.test(sentence)) return 'phone';
  }
  return null;
}

/** The first kind of contact request in the text, or null (see the module comment). */
export function findContactRequest(text: string): ContactFinding | null {
  const details = findContactDetails(text);
  if (details) return details;
  const folded = untext(foldText(text));
  if (HANDLE.test(folded)) return 'handle';
  if (CONTACT_VERB_ME.test(folded) || CONTACT_ME_PHRASES.test(folded)) return 'contact-verb';
  // Asked for, not warned about: "never share your phone number" is safety advice.
  for (const pattern of [YOUR_DETAILS, PHOTO_OF_YOU, FRIEND_REQUEST]) {
    for (const m of folded.matchAll(new RegExp(pattern.source, 'g'))) {
      if (!/\b(?:never|don't|dont|do not|not|nobody|no one|shouldn't|should not|avoid|careful)\b[^.!?]{0,20}$/.test(folded.slice(0, m.index))) return 'details-asked';
    }
  }
  if (MY_CHANNEL.test(folded)) return 'own-channel';
  if (PRIVACY.test(folded)) return 'privacy';
  for (const sentence of folded.split(/(?<=[.!?])\s+|\n+/)) {
    // "Privately" and the other manners of going elsewhere: said of the speaker, not of the teacher
    // or another school adult the learner is sent to.
    const withAdult = SCHOOL_ADULT.test(sentence) && !new RegExp(SPEAKER).test(sentence.replace(/\b(?:you|your)\b/g, ''));
    if (withAdult) continue;
    if (/\bprivately\b/.test(sentence)) return 'privacy';
    if (CONTINUE_ELSEWHERE.every((p) => p.test(sentence)) || SPEAKER_ON_CHANNEL.test(sentence)) return 'continue-elsewhere';
  }
  for (const sentence of text.normalize('NFKC').split(/(?<=[.!?])\s+|\n+/)) if (SPEAKER_ON_WORD_CHANNEL.test(sentence)) return 'continue-elsewhere';
  // A channel proposed for talking: "let's chat on insta", "we can talk more on WhatsApp".
  for (const sentence of text.normalize('NFKC').split(/(?<=[.!?])\s+|\n+/)) {
    const f = untext(foldText(sentence));
    if (!SPEAKER_OR_LEARNER.test(f) || /\b(?:never|don't|dont|do not)\b/.test(f)) continue;
    if (USE_CHANNEL.test(f) || CHANNEL_AFTER.test(f) || (WORD_CHANNEL_AFTER.test(sentence) && WORD_CHANNEL_CASED.test(sentence))) return 'channel-proposal';
  }
  return null;
}
