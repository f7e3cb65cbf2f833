package analyze

import "strings"

// stopwordText holds, per language, its most frequent function words. They
// identify the language and separate key phrases.
//
//nolint:misspell // the lists are not English
var stopwordText = map[string]string{
	"en": `a about above after again against all also am an and any are as at be because been before being
		below between both but by can could did do does doing down during each few for from further had has have
		having he her here hers herself him himself his how i if in into is it its itself just me more most my
		myself no nor not now of off on once only or other our ours out over own same she should so some such
		than that the their theirs them themselves then there these they this those through to too under until
		up very was we were what when where which while who whom why will with would you your yours`,
	"de": `aber alle allem allen aller alles als also am an andere anderen anderer anderes auch auf aus bei bin
		bis bist da damit dann das dass dein deine dem den denn der des dessen dich die dies diese diesem diesen
		dieser dieses dir doch dort du durch ein eine einem einen einer eines einige einigen er es etwas euch
		euer für gegen gewesen habe haben hat hatte hatten hier hinter ich ihm ihn ihnen ihr ihre im in indem
		ins ist jede jedem jeden jeder jedes jetzt kann kein keine können man manche mein meine mich mir mit
		muss nach nicht nichts noch nun nur ob oder ohne sehr sein seine sich sie sind so solche soll sondern
		sonst über um und uns unser unter viel vom von vor während war waren was weil welche wenn werde werden
		wie wieder will wir wird wo wollen zu zum zur zwar zwischen`,
	"fr": `à au aux avec ce ces cette comme d dans de des du elle elles en est et être eux il ils j je l la le
		les leur leurs lui ma mais me même mes moi mon n ne nos notre nous on ont ou où par pas peut plus pour qu
		que qui sa sans se ses si son sont sur ta te tes toi ton tous tout toute toutes très tu un une vos
		votre vous y été était étaient avait avoir ai aussi fait faire cet c`,
	"es": `a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el
		ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estado estamos están estar estas
		este esto estos estoy fue fueron ha hace hacia han hasta hay la las le les lo los más me mi mis mucho muy
		nada ni no nos nosotros o os otra otras otro otros para pero poco por porque que quien se sea ser si
		sido sin sobre son su sus también tanto te tiene tienen todo todos tu tus un una uno unos usted y ya él`,
	"it": `a ad agli ai al alla alle allo anche avere aveva c che chi ci come con contro cui da dal dalla
		dalle dei del della delle dello degli di dove e è ed era erano essere fa fare fra gli ha hanno ho i il
		in io la le lei li lo loro lui ma me mi mia mio molto ne nei nel nella nelle negli noi non o per perché
		più poi quale quando quella quello questa questo se sei si sia sono su sua sue suo sul sulla tra tu
		tutti tutto un una uno vi voi dell nell dall sull all`,
	"nl": `aan al alles als altijd andere ben bij daar dan dat de der deze die dit doch doen door dus een eens
		en er geen geweest haar had heb hebben heeft hem het hier hij hoe hun iemand iets ik in is ja je kan kon
		kunnen maar me meer men met mij mijn moet na naar niet niets nog nu of om omdat onder ons ook op over te
		tegen toch toen tot u uit uw van veel voor want waren was wat we wel werd wie wij wil worden wordt zal ze
		zelf zich zij zijn zo zonder zou`,
	"pt": `a ao aos as à às até com como da das de dela dele deles depois do dos e é ela elas ele eles em entre
		era essa esse esta estava este eu foi for foram há isso isto já lhe lhes mais mas me mesmo meu minha
		muito na nas não nem no nos nós o os ou para pela pelas pelo pelos por qual quando que quem se sem ser
		seu seus sua suas também te tem têm um uma umas uns você vocês`,
}

// languages lists the languages with stop words, in the order that breaks
// ties.
var languages = []string{"en", "de", "fr", "es", "it", "nl", "pt"}

// stopwords maps a language to its stop words.
var stopwords = func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for lang, text := range stopwordText {
		set := map[string]bool{}
		for _, w := range strings.Fields(text) {
			set[w] = true
		}
		out[lang] = set
	}
	return out
}()

// evidence maps a stop word to how much it says for each language: 1/n for
// each of the n languages whose list has it.
var evidence = func() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for lang, set := range stopwords {
		for w := range set {
			if out[w] == nil {
				out[w] = map[string]float64{}
			}
			out[w][lang] = 1
		}
	}
	for _, langs := range out {
		for lang := range langs {
			langs[lang] = 1 / float64(len(langs))
		}
	}
	return out
}()
