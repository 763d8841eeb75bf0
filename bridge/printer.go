package bridge

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders the validator's own messages in English.
var printer = message.NewPrinter(language.English)
